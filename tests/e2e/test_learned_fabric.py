#!/usr/bin/env python3
"""e2e 10: the analyzer started without an inventory (`fabric start
--no-inventory`) learns the 8x4x4 fabric from the agents' traceroutes: its
topology endpoint serves every link of the fabric named by its two addresses
and its switches by an address each; then a gray link (100% drop, the link
stays up) on a rail-to-spine link is ranked first and blamed within 2 windows,
named by its addresses in /api/v1/links and in its incident, with no RNIC
incident although the link also eats the traceroutes that would cross it."""

import unittest

import e2e

LINK = "p0r0-s00"


class LearnedFabric(e2e.FabricTestCase):
    START_ARGS = ("--no-inventory",)

    def test_learned_fabric_localizes_a_gray_link_by_its_addresses(self):
        lay = self.fab.layout
        expected = {f"{link.a.ip}-{link.b.ip}" for link in lay.links}
        gray = lay.link(LINK)
        gray_name = f"{gray.a.ip}-{gray.b.ip}"

        self.wait_healthy_window()
        status = e2e.api("status") or {}
        self.assertFalse(status.get("inventory_loaded"), status)
        self.assertEqual(status.get("topology_source"), "learned", status)
        topo = e2e.api("topology")
        self.assertIsNotNone(topo, "no learned topology served")
        self.assertEqual(topo["source"], "learned")
        names = {link["name"] for link in topo["links"]}
        self.assertEqual(names, expected, "learned links differ from the fabric's")
        switches = {end["device"] for link in topo["links"] if link["kind"] == "fabric"
                    for end in link["ends"]}
        rails, spines = lay.size.rails * lay.size.pods, lay.size.spines
        self.assertEqual(len(switches), rails + spines, sorted(switches))
        tiers = {d["name"]: d["tier"] for d in topo["devices"]}
        self.assertEqual(sorted(tiers[s] for s in switches),
                         ["rail"] * rails + ["spine"] * spines)
        e2e.log(f"learned {len(names)} links, {len(switches)} switches (topology version "
                f"{topo['version']})")

        t = self.inject("gray", "--link", LINK)
        bound = self.windows_after(t, 2)
        first_ranked = []
        last = None
        for snap in self.windows_until(bound, self.deadline_for(bound)):
            if snap.end_s <= t:
                continue
            last = snap
            if snap.links and snap.links[0]["name"] == gray_name and snap.links[0]["culprit"]:
                first_ranked.append(snap.end_s)
        self.assertIsNotNone(last, "no window judged after the injection")
        self.assertTrue(first_ranked, f"{gray_name} ({LINK}) not ranked first within 2 "
                                      f"windows; last: {last.describe()}")
        self.assertEqual([l["name"] for l in last.culprits()], [gray_name], last.describe())
        incidents = [i for i in last.incidents["open"] if i["kind"] == "link_loss"]
        self.assertTrue(incidents, f"no link incident open: {last.describe()}")
        self.assertEqual(incidents[0]["suspect"]["name"], gray_name)
        self.assertIn(gray_name, incidents[0]["summary"])
        self.assertEqual([e["ip"] for e in incidents[0]["suspect"]["ends"]],
                         [gray.a.ip, gray.b.ip])
        # The traces the gray link cut short do not pass for paths through one
        # switch: the rail-0 RNICs are not blamed for the link's losses.
        rnic_incidents = [i["summary"] for i in last.incidents["open"]
                          if i["kind"] in ("rnic_down", "rnic_lossy")]
        self.assertEqual(rnic_incidents, [], "RNIC incidents open for a link fault")


if __name__ == "__main__":
    e2e.main()
