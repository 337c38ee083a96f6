#!/usr/bin/env python3
"""e2e 1: 100% drop (gray failure, the link stays up) on one rail-to-spine
link of an 8x4x4 fabric with real agents and the real analyzer: within 2
windows after the injection that link is ranked first (and a culprit), and no
RNIC is marked anomalous although about 1/4 of the probes of every rail-0 NIC
time out (the paper's per-RNIC rule would blame them all)."""

import unittest

import e2e

LINK = "p0r0-s00"


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


if __name__ == "__main__":
    e2e.main()
