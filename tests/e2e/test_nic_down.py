#!/usr/bin/env python3
"""e2e 2: one NIC down on an 8x4x4 fabric with real agents and the real
analyzer: that RNIC is marked anomalous within 2 windows after the
injection, and down (its sends fail) by the second, and no switch link is blamed (no culprit link,
no open link-loss incident). Its incident is diagnosed unreachable_rnic from
its send failures (its agent's sends fail on the down interface), which the
analysis keeps out of loss."""

import unittest

import e2e

HOST, NIC = "h003", 1


class NicDown(e2e.FabricTestCase):
    def test_nic_down_rnic_anomalous_no_link_blamed(self):
        healthy = self.wait_healthy_window()
        t = self.inject("nic-down", "--host", HOST, "--nic", f"nic{NIC}")
        bound = self.windows_after(t, 2)
        flagged = []
        false = []
        nic_name = f"{HOST}.nic{NIC}"
        for snap in self.windows_until(bound, self.deadline_for(bound)):
            false += e2e.false_verdicts(snap, {nic_name} if snap.end_s > t else set(),
                                        healthy.start_s)
            if snap.end_s <= t:
                continue
            r = snap.rnic(HOST, NIC)
            if r and r["anomalous"] and r["state"] in ("down", "lossy"):
                flagged.append(snap.end_s)
            last = snap
        self.assertTrue(flagged, f"{HOST}.nic{NIC} not anomalous within 2 windows; "
                                 f"last: {last.describe()}")
        # Its own probes could not leave it while those to it were lost: down,
        # not lossy, by the second window (the first whole one) at the latest.
        self.assertEqual(last.rnic(HOST, NIC)["state"], "down", last.describe())
        self.assertGreater(last.rnic(HOST, NIC)["send_failures"], 0, last.rnic(HOST, NIC))
        others = [f"{r['host']}.nic{r['nic']}" for r in last.anomalous_rnics()
                  if (r["host"], r["nic"]) != (HOST, NIC)]
        self.assertEqual(others, [], "other RNICs marked anomalous")
        self.assertEqual([e2e.link_name(l) for l in last.culprits()], [],
                         "switch links blamed for a NIC fault")
        link_incidents = [i for i in last.incidents["open"] if i["kind"] == "link_loss"
                          and "link" in i["suspect"]]
        self.assertEqual(link_incidents, [], "link-loss incident opened for a NIC fault")
        mine = [i for i in last.incidents["open"] if i["suspect"].get("host") == HOST
                and i["suspect"].get("nic") == NIC and "link" not in i["suspect"]]
        self.assertTrue(mine, f"no open incident for {HOST}.nic{NIC}: {last.describe()}")
        self.assertEqual(sorted(set(false)), [], "blamed in some window beside the down NIC")
        diagnosis = mine[0]["diagnosis"]
        e2e.log(f"diagnosis: {diagnosis}")
        self.assertEqual(diagnosis["type"], "unreachable_rnic", diagnosis)
        self.assertIn("could not send", diagnosis["evidence"], diagnosis)


if __name__ == "__main__":
    e2e.main()
