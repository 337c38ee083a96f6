#!/usr/bin/env python3
"""e2e 4 and 6 on one fabric (8x4x4, real agents and the real analyzer), the
two faults injected together on links of different spines:

  loss   5% on one spine-to-rail link, one way only (s02 down to p0r1, a
         dirty optic at one end)
           -> test_loss: within 3 windows after the injection that link is
              ranked first in the loss ranking (and a culprit). Only about
              10 probes a window cross it and are lost, and each rail-1 NIC
              loses about 1% of the probes sent to it, far below the RNIC
              bar: no RNIC may be blamed.
  delay  2 ms added on one rail-to-spine link, both ways (p0r2-s01)
           -> test_delay: within 2 windows after the injection that link is
              the first latency hotspot (ranked first and a culprit in
              /api/v1/links?kind=latency) and a latency_hotspot incident names
              it; and a slow link is not a broken one: it is no loss culprit
              and has no drop incident (link_loss, RNIC, switch). Probes are
              about 10 us across the fabric here, so 2 ms is far above the
              slow bar (500 us).

Why they can share: every probe crosses exactly one spine, so no probe meets
both faults, and each verdict must be the one its fault alone gives; each
test also fails if the other fault's link gets this fault's kind of verdict
(the delayed link a loss culprit, the lossy link a latency hotspot). Nothing
else may be blamed in any window (culprit links, anomalous RNICs, incidents
opened after the healthy window)."""

from __future__ import annotations

import time
import unittest

import e2e

LOSS_LINK, LOSS_FROM = "p0r1-s02", "s02"
DELAY_LINK = "p0r2-s01"
LOSS_WINDOWS, DELAY_WINDOWS = 3, 2
DROP_KINDS = ("link_loss", "switch", "rnic_down", "rnic_lossy")


def latency_ranking(snap: e2e.Snapshot) -> list[dict] | None:
    """The latency ranking of the same window as `snap`, or None (read just
    after it: a newer window may already be served)."""
    latency = e2e.api("links?kind=latency") or {}
    if int((latency.get("window") or {}).get("end_ns", 0)) != round(snap.end_s * 1e9):
        return None
    return latency["links"]


class LossAndDelay(e2e.TimelineCase):
    healthy: e2e.Snapshot | None = None
    latency: dict[float, list[dict]] = {}  # window end -> its latency ranking

    @classmethod
    def run_timeline(cls, tl: e2e.Timeline) -> None:
        probe = cls("test_loss")
        cls.healthy = probe.wait_healthy_window()

        now = time.time()
        bound = cls.windows_after(now, max(LOSS_WINDOWS, DELAY_WINDOWS))
        tl.record(bound, [
            (now, "loss", tl.add("loss", "loss", "--link", LOSS_LINK, "--percent", "5", "--from",
                              LOSS_FROM)),
            (now, "delay", tl.add("delay", "delay", "--link", DELAY_LINK, "--ms", "2")),
        ], on_window=cls.read_latency)

    @classmethod
    def read_latency(cls, snap: e2e.Snapshot) -> None:
        ranking = latency_ranking(snap)
        if ranking is not None:
            cls.latency[snap.end_s] = ranking
            e2e.log("latency: " + ", ".join(
                f"#{l['rank']} {e2e.link_name(l)} culprit={l['culprit']} slow={l['failures']} "
                f"fast={l['good']}" for l in ranking[:3]))

    def after(self, event: str, windows: int) -> list[e2e.Snapshot]:
        """Windows ending after the event, up to `windows` full windows after it."""
        t = self.tl.at[event]
        return self.tl.between(t, self.windows_after(t, windows))

    def test_nothing_else_blamed(self):
        healthy = self.healthy
        injected = min(self.tl.at["loss"], self.tl.at["delay"])
        false = []
        for snap in self.tl.between(healthy.end_s):
            allowed = {LOSS_LINK, DELAY_LINK} if snap.end_s > injected else set()
            false += e2e.false_verdicts(snap, allowed, healthy.start_s)
        self.assertEqual(sorted(set(false)), [], "blamed in some window beside the two faults")

    def test_loss(self):
        windows = self.after("loss", LOSS_WINDOWS)
        first_ranked = [s.end_s for s in windows if s.links and e2e.link_name(s.links[0]) == LOSS_LINK
                        and s.links[0]["culprit"]]
        last = windows[-1]
        self.assertTrue(first_ranked, f"{LOSS_LINK} (5% loss from {LOSS_FROM}) not ranked first "
                                      f"within {LOSS_WINDOWS} windows of the injection; last: "
                                      f"{last.describe()}")
        blamed_rnics = [f"{r['host']}.nic{r['nic']} ({r['state']})" for s in windows
                        for r in s.anomalous_rnics()]
        self.assertEqual(blamed_rnics, [], "RNICs marked anomalous for a 5% link loss")
        hot = [f"{e2e.link_name(l)} in the window ending {end:.0f}"
               for end, ranking in self.latency.items() if end > self.tl.at["loss"]
               for l in ranking if l["culprit"] and e2e.link_name(l) == LOSS_LINK]
        hot += [f"{i['kind']} {i['summary']}" for s in windows for i in s.incidents["open"]
                if i["kind"] == "latency_hotspot" and e2e.suspect_name(i) == LOSS_LINK]
        self.assertEqual(sorted(set(hot)), [], "the lossy link named a latency hotspot")

    def test_delay(self):
        windows = self.after("delay", DELAY_WINDOWS)
        hot = [s.end_s for s in windows if self.latency.get(s.end_s)
               and e2e.link_name(self.latency[s.end_s][0]) == DELAY_LINK
               and self.latency[s.end_s][0]["culprit"]]
        last = windows[-1]
        self.assertTrue(hot, f"{DELAY_LINK} not the first latency hotspot within {DELAY_WINDOWS} "
                             f"windows; last: {last.describe()}")
        hotspots = [e2e.suspect_name(i) for i in last.incidents["open"]
                    if i["kind"] == "latency_hotspot"]
        self.assertIn(DELAY_LINK, hotspots, f"no latency_hotspot incident for {DELAY_LINK}")
        # A slow link is not a broken one: no loss verdict on it, in any window.
        drops = [f"{e2e.link_name(l)} culprit" for s in self.tl.between(self.tl.at["delay"])
                 for l in s.culprits() if e2e.link_name(l) == DELAY_LINK]
        drops += [f"{i['kind']} {i['summary']}" for s in self.tl.between(self.tl.at["delay"])
                  for i in s.incidents["open"]
                  if i["kind"] in DROP_KINDS and e2e.suspect_name(i) == DELAY_LINK]
        self.assertEqual(sorted(set(drops)), [], "drops reported for a delay")


if __name__ == "__main__":
    e2e.main()
