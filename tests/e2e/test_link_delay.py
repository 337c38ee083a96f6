#!/usr/bin/env python3
"""e2e 6: 2 ms added delay on one rail-to-spine link (both ways, p0r2-s01) of an
8x4x4 fabric with real agents and the real analyzer: within 2 windows after
the injection that link is the first latency hotspot (ranked first and a
culprit in /api/v1/links?kind=latency) and a latency_hotspot incident names
it; and a slow link is not a broken one: no drop incident (link_loss, RNIC,
switch), no culprit in the loss ranking, no RNIC anomalous. Probes are about
10 us across the fabric here, so 2 ms is far above the slow bar (500 us)."""

import unittest

import e2e

LINK = "p0r2-s01"
DROP_KINDS = ("link_loss", "switch", "rnic_down", "rnic_lossy")


class LinkDelay(e2e.FabricTestCase):
    def latency_links(self, snap: e2e.Snapshot) -> list[dict] | None:
        """The latency ranking of the same window as `snap`, or None."""
        latency = e2e.api("links?kind=latency") or {}
        if int((latency.get("window") or {}).get("end_ns", 0)) != round(snap.end_s * 1e9):
            return None
        return latency["links"]

    def test_delay_is_a_latency_hotspot_not_a_drop(self):
        healthy = self.wait_healthy_window()
        t = self.inject("delay", "--link", LINK, "--ms", "2")
        bound = self.windows_after(t, 2)
        hot = []
        drops = []
        false = []
        for snap in self.windows_until(bound, self.deadline_for(bound)):
            # The link's latency incident is its verdict; a loss culprit on it is caught below.
            false += e2e.false_verdicts(snap, {LINK} if snap.end_s > t else set(),
                                        healthy.start_s)
            if snap.end_s <= t:
                continue  # judged before the fault
            latency = self.latency_links(snap)
            if latency is not None:
                e2e.log("latency: " + ", ".join(
                    f"#{l['rank']} {e2e.link_name(l)} culprit={l['culprit']} slow={l['failures']} "
                    f"fast={l['good']}" for l in latency[:3]))
                if latency and e2e.link_name(latency[0]) == LINK and latency[0]["culprit"]:
                    hot.append(snap.end_s)
            drops += [f"{e2e.link_name(l)} culprit" for l in snap.culprits()]
            drops += [f"{r['host']}.nic{r['nic']} anomalous" for r in snap.anomalous_rnics()]
            drops += [f"{i['kind']} {i['summary']}" for i in snap.incidents["open"]
                      if i["kind"] in DROP_KINDS]
            last = snap
        self.assertTrue(hot, f"{LINK} not the first latency hotspot within 2 windows; "
                             f"last: {last.describe()}")
        hotspots = [e2e.link_name(i["suspect"]) for i in last.incidents["open"]
                    if i["kind"] == "latency_hotspot"]
        self.assertIn(LINK, hotspots, f"no latency_hotspot incident for {LINK}")
        self.assertEqual(sorted(set(drops)), [], "drops reported for a delay")
        self.assertEqual(sorted(set(false)), [], "blamed in some window beside the slow link")


if __name__ == "__main__":
    e2e.main()
