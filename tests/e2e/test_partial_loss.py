#!/usr/bin/env python3
"""e2e 4: 5% loss on one spine-to-rail link, one way only (s02 down to p0r1, a
dirty optic at one end) of an 8x4x4 fabric with real agents and the real
analyzer: within 3 windows after the injection that link is ranked first (and
a culprit). Only about 10 probes a window cross it and are lost, and each
rail-1 NIC loses about 1% of the probes sent to it, far below the RNIC bar: no
RNIC may be blamed."""

import unittest

import e2e

LINK, FROM = "p0r1-s02", "s02"


class PartialLoss(e2e.FabricTestCase):
    def test_partial_loss_ranked_first_within_3_windows(self):
        healthy = self.wait_healthy_window()
        t = self.inject("loss", "--link", LINK, "--percent", "5", "--from", FROM)
        bound = self.windows_after(t, 3)
        first_ranked = []
        blamed_rnics = []
        false = []
        for snap in self.windows_until(bound, self.deadline_for(bound)):
            false += e2e.false_verdicts(snap, {LINK} if snap.end_s > t else set(),
                                        healthy.start_s)
            if snap.end_s <= t:
                continue  # judged before the fault
            if snap.links and e2e.link_name(snap.links[0]) == LINK and snap.links[0]["culprit"]:
                first_ranked.append(snap.end_s)
            blamed_rnics += [f"{r['host']}.nic{r['nic']} ({r['state']})"
                             for r in snap.anomalous_rnics()]
            last = snap
        self.assertTrue(first_ranked, f"{LINK} (5% loss from {FROM}) not ranked first within 3 "
                                      f"windows of the injection; last: {last.describe()}")
        self.assertEqual(blamed_rnics, [], "RNICs marked anomalous for a 5% link loss")
        self.assertEqual(sorted(set(false)), [], "blamed in some window beside the faulty link")


if __name__ == "__main__":
    e2e.main()
