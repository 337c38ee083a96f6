#!/usr/bin/env python3
"""e2e 1: 100% drop (gray failure, the link stays up) on one rail-to-spine
link of an 8x4x4 fabric with real agents and the real analyzer: within 2
windows after the injection that link is ranked first (and a culprit), and no
RNIC is marked anomalous although about 1/4 of the probes of every rail-0 NIC
time out (the paper's per-RNIC rule would blame them all).

Then, on the same fabric with the gray link cleared (issue 29): spine s01
dies (every link to it down). Routing avoids it within a second; the spine
is one incident, kind switch, held while it is down, named in the switches'
view in every window the incident is open, and nothing else is blamed: not
its links one by one, no RNIC."""

import time
import unittest

import e2e

LINK = "p0r0-s00"
SPINE = "s01"


class GrayLink(e2e.FabricTestCase):
    observed: list = []  # the windows after the injection, for the second test

    def test_gray_link_ranked_first_no_rnic_blamed(self):
        self.wait_healthy_window()
        t = self.inject("gray", "--link", LINK)
        bound = self.windows_after(t, 2)
        first_ranked = []
        blamed_rnics = []
        for snap in self.windows_until(bound, self.deadline_for(bound)):
            if snap.end_s <= t:
                continue  # judged before the fault
            if snap.links and e2e.link_name(snap.links[0]) == LINK and snap.links[0]["culprit"]:
                first_ranked.append(snap.end_s)
            blamed_rnics += [f"{r['host']}.nic{r['nic']} ({r['state']})"
                             for r in snap.anomalous_rnics()]
            last = snap
            GrayLink.observed.append(snap)
        self.assertTrue(first_ranked, f"{LINK} not ranked first within 2 windows of the "
                                      f"injection; last: {last.describe()}")
        # The last window within the bound still has it first: a verdict, not a blip.
        self.assertEqual(e2e.link_name(last.links[0]), LINK, last.describe())
        self.assertEqual(blamed_rnics, [], "RNICs marked anomalous for a link fault")
        self.assertEqual([e2e.link_name(l) for l in last.culprits()], [LINK],
                         "exactly one culprit link")

    # A link fault's leftovers (untraced probes, window edges) may leave a few
    # RNICs blamed with small loss; below the 10% bar that is a network drop,
    # so on call must not be paged with RNIC incidents for a switch-link fault.
    def test_no_rnic_incident_for_a_link_fault(self):
        if not GrayLink.observed:
            self.skipTest("the first test saw no window after the injection")
        last = GrayLink.observed[-1]
        rnic_incidents = [f"{i['suspect'].get('host')}.{i['suspect'].get('nic_name')} "
                          f"conf={i['confidence']:.2f}" for i in last.incidents["open"]
                          if i["kind"] in ("rnic_down", "rnic_lossy")]
        self.assertEqual(rnic_incidents, [], "RNIC incidents open for a link fault")

    def wait_quiet_window(self, timeout: float = 180.0) -> e2e.Snapshot:
        """A healthy window with no incident open either: the gray link's
        resolved, so that every incident after it is new."""
        deadline = time.time() + timeout
        while True:
            snap = self.wait_healthy_window(max(1.0, deadline - time.time()))
            if not snap.incidents["open"]:
                return snap
            if time.time() > deadline:
                self.fail(f"incidents still open: {snap.describe()}")
            time.sleep(1.0)

    def test_z_a_dead_spine_is_one_incident_on_the_spine(self):
        e2e.fabric("fault", "clear")  # the gray link, if the first test left it
        healthy = self.wait_quiet_window()
        spine_links = {f"p0r{rail}-{SPINE}" for rail in range(self.RAILS)}
        t = time.time()
        for link in sorted(spine_links):
            self.inject("link-down", "--link", link)
        bound = self.windows_after(t, 6)
        named_by = self.windows_after(t, 3)  # its first failures, then routing's draws
        false, unnamed, opened = [], [], {}
        for snap in self.windows_until(bound, self.deadline_for(bound)):
            early = snap.end_s <= named_by  # the links may lead before routing is seen
            allowed = {SPINE} | (spine_links if early else set())
            false += e2e.false_verdicts(snap, allowed if snap.end_s > t else set(),
                                        healthy.start_s)
            # The spine's and its links' incidents: one, which may start on a
            # link and be moved onto the spine (the same id), never two.
            for inc in snap.incidents["open"]:
                if e2e.suspect_name(inc) in spine_links | {SPINE}:
                    opened[inc["id"]] = inc
            mine = [i for i in snap.incidents["open"] if e2e.suspect_name(i) == SPINE]
            if snap.end_s <= named_by:
                continue
            switches = e2e.api("switches?suspicious") or {}
            if (switches.get("window") or {}).get("end_ns", 0) / 1e9 != snap.end_s:
                continue  # a newer window came between the reads
            in_view = [w["name"] for w in switches.get("switches", []) if w.get("culprit")]
            if not mine or in_view != [SPINE]:
                unnamed.append(f"{snap.describe()}; switches view {in_view}")
        self.assertEqual([i["kind"] for i in opened.values()], ["switch"],
                         f"incidents on {SPINE} and its links: one expected, at last on the "
                         f"switch: {list(opened.values())}")
        self.assertEqual(unnamed, [], f"{SPINE} not one open incident and the switches view's "
                                      f"only culprit in every window from the third on")
        self.assertEqual(sorted(set(false)), [], f"blamed beside the dead spine {SPINE}")


if __name__ == "__main__":
    e2e.main()
