#!/usr/bin/env python3
"""e2e 2 and 3: two faults at once on an 8x4x4 fabric with real agents and the
real analyzer: 100% drop on one rail-to-spine link (gray, p0r0-s00) and one
NIC down (h005.nic0). Within 2 windows after the injections the link is
ranked first and a culprit and that RNIC is anomalous, and no other RNIC is
anomalous and no other link a culprit. The NIC is down (its sends fail), not
lossy, by the second window, and its incident is diagnosed unreachable_rnic
from its send failures (its agent's sends fail on the down interface), which
the analysis keeps out of loss: the only link incident is the gray link's.

Why a NIC of the same rail: h005.nic0 hangs off p0r0 too, so part of its own
probes cross the gray link, and every other rail-0 NIC loses about a quarter
of its probes to the link. The analyzer must split one rail's timeouts between
two causes: the down RNIC explains all of its own (on every spine), the link
the rest; blaming the rail's other RNICs, the NIC's own link or its rail
switch, is the mistake to catch. On different rails no probe would meet both
faults, and this would be the two single-fault tests run side by side."""

import unittest

import e2e

LINK = "p0r0-s00"
HOST, NIC = "h005", 0
NIC_NAME = f"{HOST}.nic{NIC}"


class BothFaults(e2e.FabricTestCase):
    def test_link_and_rnic_both_found_nothing_else_blamed(self):
        healthy = self.wait_healthy_window()
        t0 = self.inject("gray", "--link", LINK)
        t = self.inject("nic-down", "--host", HOST, "--nic", f"nic{NIC}")
        bound = self.windows_after(t, 2)
        other_rnics = []
        false = []
        for snap in self.windows_until(bound, self.deadline_for(bound)):
            false += e2e.false_verdicts(snap, {LINK, NIC_NAME} if snap.end_s > t0 else set(),
                                        healthy.start_s)
            if snap.end_s <= t0:
                continue  # judged before the faults
            other_rnics += [f"{r['host']}.nic{r['nic']} ({r['state']})"
                            for r in snap.anomalous_rnics() if (r["host"], r["nic"]) != (HOST, NIC)]
            last = snap
        # The last window within the bound holds both verdicts.
        self.assertTrue(last.links and e2e.link_name(last.links[0]) == LINK
                        and last.links[0]["culprit"],
                        f"{LINK} not ranked first (culprit): {last.describe()}")
        rnic = last.rnic(HOST, NIC)
        self.assertTrue(rnic and rnic["anomalous"], f"{NIC_NAME} not anomalous: {last.describe()}")
        # Its own probes could not leave it while those to it were lost: down,
        # not lossy, by the second window (the first whole one) at the latest.
        self.assertEqual(rnic["state"], "down", last.describe())
        self.assertGreater(rnic["send_failures"], 0, rnic)
        self.assertEqual(other_rnics, [], "other RNICs marked anomalous")
        self.assertEqual([e2e.link_name(l) for l in last.culprits()], [LINK],
                         "exactly one culprit link")
        self.assertEqual(sorted(set(false)), [], "blamed in some window beside the two faults")
        links = [e2e.suspect_name(i) for i in last.incidents["open"] if i["kind"] == "link_loss"]
        self.assertEqual(links, [LINK], "link incidents other than the gray link's")
        mine = [i for i in last.incidents["open"] if e2e.suspect_name(i) == NIC_NAME]
        self.assertTrue(mine, f"no open incident for {NIC_NAME}: {last.describe()}")
        diagnosis = mine[0]["diagnosis"]
        e2e.log(f"diagnosis: {diagnosis}")
        self.assertEqual(diagnosis["type"], "unreachable_rnic", diagnosis)
        self.assertIn("could not send", diagnosis["evidence"], diagnosis)


if __name__ == "__main__":
    e2e.main()
