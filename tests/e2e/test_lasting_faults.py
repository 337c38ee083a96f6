#!/usr/bin/env python3
"""e2e 10-15 (issue 14): faults that last, found and held for as long as they
last, one incident each, on one shared 8x4x4 fabric with real agents and the
real analyzer (window 10 s). One fabric, one timeline, each property asserted
by its own test from the windows recorded along it:

  load (150 s)   no fault; the machine loaded by a parallel build (`make -j2`
                 of this project's sources, not niced)
                   -> test_0: no incident at all, no culprit, no RNIC blamed
  phase 1 (5 min)  gray p0r3-s03 (both ways, stays 10 min), 1% loss both ways
                 on p0r0-s00, 3% loss in spine s01 (`switch-loss`: everything
                 it forwards)
                   -> test_1a: p0r0-s00 named (culprit, link incident) within
                      5 minutes, held in every window after to the end of
                      phase 2, one incident
                   -> test_1b: s01 named as a switch (kind switch) within 5
                      minutes and held, no incident on any of its links
                   -> test_1c: nothing else blamed
  phase 2 (5 min)  s01 cleared; the gray and p0r0-s00's 1% stay; h002.nic1
                 flaps (down 0.5 s, up 0.5 s: a 1 s period); 5% loss both ways
                 on h005.nic2's access link (h005.nic2-p0r2); 1% both ways on
                 h006.nic0's (h006.nic0-p0r0), under the same rail switch as
                 p0r0-s00 (issue 29 item 6: a small RNIC fault beside a small
                 link fault)
                   -> test_2a: one incident of kind flapping for h002.nic1,
                      no link blamed
                   -> test_2b: one rnic_lossy incident for h005.nic2 with a
                      loss estimate near 5%, no fabric link blamed
                   -> test_2d: one rnic_lossy incident for h006.nic0, named
                      within 5 minutes and held (not let go and reopened),
                      its rail switch p0r0 never named
                   -> test_2c: nothing else blamed; the spine cleared at the
                      end of phase 1 has its incident resolved
  gray, 10 min     -> test_3: p0r3-s03 ranked first (and a culprit) in every
                      window from the first that holds it all to 10 minutes
                      later, one incident, open the whole time

Why they can share: every probe crosses exactly one spine, so faults on
s00 (p0r0-s00), s01 (the spine) and s03 (p0r3-s03) never meet on a path. A
NIC's probes cross every spine, so in phase 2 about 1/12 of h002.nic1's and
h005.nic2's probes (those to and from rail 3 through s03) also cross the gray
link: the analyzer has to keep those apart (issue 14: two faults on one
path), and the tests assert the same verdicts as for each fault alone.
h006.nic0's cable and p0r0-s00 do meet: a quarter of the NIC's probes cross
the link, and the two faults' failures fall partly on each other's paths;
each must still be held as one incident, and rail switch p0r0 above both
never blamed. The
timeline takes about 14-15 minutes instead of the 40 of separate fabrics.
"""

from __future__ import annotations

import time
import unittest

import e2e

W = e2e.WINDOW_S
LOAD_S = 150
PHASE_S = 300  # "within 5 minutes"
GRAY_S = 600  # "held for 10 minutes"
GRAY = "p0r3-s03"
SMALL, SMALL_PERCENT = "p0r0-s00", "1"
SPINE, SPINE_PERCENT = "s01", "3"
FLAP_HOST, FLAP_NIC, FLAP_PERIOD = "h002", "nic1", "0.5"  # s between changes: a 1 s cycle
LOSSY_HOST, LOSSY_NIC, LOSSY_PERCENT = "h005", "nic2", "5"
LOSSY_LINK = f"{LOSSY_HOST}.{LOSSY_NIC}-p0r2"
CABLE_HOST, CABLE_NIC, CABLE_PERCENT = "h006", "nic0", "1"
CABLE_LINK = f"{CABLE_HOST}.{CABLE_NIC}-p0r0"
FLAP_LINK = f"{FLAP_HOST}.{FLAP_NIC}-p0r1"
LINK_KINDS = ("link_loss", "switch")


def on_switch(name: str, switch: str) -> bool:
    """Whether a link name (`p0r1-s01`) has `switch` at one end, or is it."""
    return name == switch or switch in name.split("-")


class LastingFaults(e2e.TimelineCase):
    @classmethod
    def run_timeline(cls, tl: e2e.Timeline) -> None:
        t0 = time.monotonic()
        probe = cls("test_0_loaded_machine_no_incident")
        probe.wait_healthy_window()
        tl.at["healthy"] = time.time()
        load = e2e.BuildLoad()

        load.start()
        tl.at["load"] = time.time()
        try:
            tl.record(tl.at["load"] + LOAD_S, [])
        finally:
            e2e.log(load.stop())
        tl.at["load_end"] = time.time()
        start = time.time()
        tl.record(start + PHASE_S, [
            (start, "gray", tl.add("gray", "gray", "--link", GRAY)),
            (start, "small", tl.add("small", "loss", "--link", SMALL, "--percent", SMALL_PERCENT)),
            (start, "spine", tl.add("spine", "switch-loss", "--switch", SPINE, "--percent",
                                 SPINE_PERCENT)),
        ])
        # Phase 2 at 5 minutes from the first injection, whatever the window edges.
        phase2 = tl.at["gray"] + PHASE_S
        tl.record(max(phase2 + PHASE_S, tl.at["gray"] + GRAY_S), [
            (phase2, "cleared", tl.clear("spine")),
            (phase2, "flap", tl.add("flap", "nic-flap", "--host", FLAP_HOST, "--nic", FLAP_NIC,
                                 "--period", FLAP_PERIOD)),
            (phase2, "lossy", tl.add("lossy", "loss", "--link", LOSSY_LINK, "--percent",
                                  LOSSY_PERCENT)),
            (phase2, "cable", tl.add("cable", "loss", "--link", CABLE_LINK, "--percent",
                                  CABLE_PERCENT)),
        ])
        tl.at["end"] = time.time()
        e2e.log(f"timeline done in {time.monotonic() - t0:.0f} s: " + ", ".join(
            f"{k} +{v - tl.at['healthy']:.0f} s" for k, v in tl.at.items()))

    # --- helpers over the recorded timeline -------------------------------

    def phase1(self) -> list[e2e.Snapshot]:
        return self.tl.between(self.tl.at["gray"], self.tl.at["cleared"])

    def phase2(self) -> list[e2e.Snapshot]:
        return self.tl.between(self.tl.at["flap"])

    def assertNamedAndHeld(self, what: str, windows: list[e2e.Snapshot], injected: float,
                           named, related: dict[int, dict] | None = None) -> e2e.Snapshot:
        """The first window where `named(snap)` holds ends within PHASE_S of the
        injection, and it holds in every window after it; returns that window.
        `related`: the incidents about the fault, shown when it was not named."""
        first = next((s for s in windows if named(s)), None)
        last = windows[-1] if windows else None
        self.assertIsNotNone(first, f"{what} not named within {PHASE_S} s of the injection; "
                                    f"incidents about it: {e2e.describe_incidents((related or {}).values())}; "
                                    f"last window: {last.describe() if last else None}")
        e2e.log(f"{what}: named {first.end_s - injected:.0f} s after the injection")
        self.assertLessEqual(first.end_s - injected, PHASE_S + W,
                             f"{what} named only {first.end_s - injected:.0f} s after the "
                             "injection")
        lost = [s for s in windows if s.end_s > first.end_s and not named(s)]
        self.assertEqual([s.describe() for s in lost], [],
                         f"{what} named at +{first.end_s - injected:.0f} s, then dropped in "
                         f"{len(lost)} of {len([s for s in windows if s.end_s > first.end_s])} "
                         "windows")
        return first

    def assertOneIncident(self, what: str, related: dict[int, dict], kinds: tuple[str, ...],
                          held_from: float, until: float) -> dict:
        """Exactly one incident about the fault, of one of `kinds`, open in
        every window from `held_from` to `until`."""
        self.assertEqual(len(related), 1, f"{what}: one incident expected, got "
                                          f"{e2e.describe_incidents(related.values())}")
        [inc] = related.values()
        self.assertIn(inc["kind"], kinds, f"{what}: {e2e.describe_incidents([inc])}")
        windows = [s.end_s for s in self.tl.snaps if held_from <= s.end_s <= until]
        closed = [w for w in windows if w not in inc["open_in"]]
        self.assertEqual(closed, [], f"{what}: incident #{inc['id']} not open in "
                                     f"{len(closed)} of {len(windows)} windows")
        return inc

    def link_incidents(self, incidents: dict[int, dict], name: str) -> dict[int, dict]:
        return {i: inc for i, inc in incidents.items() if e2e.suspect_name(inc) == name}

    def about_nic(self, incidents: dict[int, dict], host: str, nic: str,
                  link: str) -> dict[int, dict]:
        return {i: inc for i, inc in incidents.items()
                if e2e.suspect_name(inc) in (f"{host}.{nic}", link)}

    # --- the tests --------------------------------------------------------

    def test_0_loaded_machine_no_incident(self):
        # Windows wholly inside the load (it ramps up within seconds), and every
        # incident served while no fault was in.
        loaded = self.tl.whole(self.tl.at["load"], self.tl.at["load_end"])
        self.assertGreaterEqual(len(loaded), LOAD_S // W - 3, "too few windows judged under load")
        no_fault = self.tl.between(self.tl.at["load"], self.tl.at["load_end"])
        opened = self.tl.opened(no_fault, self.before(self.tl.at["load"]))
        self.assertEqual(e2e.describe_incidents(opened.values()), [],
                         "incidents opened on a fault-free fabric under a build")
        blamed = sorted({f"{e2e.link_name(l)} culprit" for s in loaded for l in s.culprits()}
                        | {f"{r['host']}.nic{r['nic']} {r['state']}" for s in loaded
                           for r in s.anomalous_rnics()})
        self.assertEqual(blamed, [], "links or RNICs blamed on a fault-free fabric under a build")

    def test_1a_small_loss_named_within_5_minutes_held_one_incident(self):
        t = self.tl.at["small"]
        # It lasts both phases: held beside phase 2's faults too.
        windows = self.tl.between(t)

        def named(s: e2e.Snapshot) -> bool:
            culprit = SMALL in [e2e.link_name(l) for l in s.culprits()]
            incident = any(e2e.suspect_name(i) == SMALL and i["kind"] == "link_loss"
                           for i in s.incidents["open"])
            return culprit and incident

        related = self.link_incidents(self.tl.opened(windows, self.before(t)), SMALL)
        first = self.assertNamedAndHeld(f"{SMALL} ({SMALL_PERCENT}% both ways)", windows, t, named,
                                        related)
        self.assertOneIncident(SMALL, related, ("link_loss",), first.end_s, windows[-1].end_s)

    def test_1b_spine_loss_names_the_switch_not_its_links(self):
        t = self.tl.at["spine"]
        windows = self.phase1()

        def named(s: e2e.Snapshot) -> bool:
            return any(i["kind"] == "switch" and e2e.suspect_name(i) == SPINE
                       for i in s.incidents["open"])

        opened = self.tl.opened(windows, self.before(t))
        related = {i: inc for i, inc in opened.items() if on_switch(e2e.suspect_name(inc), SPINE)}
        first = self.assertNamedAndHeld(f"spine {SPINE} ({SPINE_PERCENT}%)", windows, t, named,
                                        related)
        self.assertOneIncident(f"spine {SPINE}", related, ("switch",), first.end_s,
                               windows[-1].end_s)

    def test_1c_phase1_nothing_else_blamed(self):
        windows = self.phase1()
        opened = self.tl.opened(windows, self.before(self.tl.at["gray"]))
        faulty = (GRAY, SMALL)
        others = [inc for inc in opened.values()
                  if e2e.suspect_name(inc) not in faulty
                  and not on_switch(e2e.suspect_name(inc), SPINE)]
        self.assertEqual(e2e.describe_incidents(others), [], "incidents on parts that are not faulty")
        rnics = sorted({f"{r['host']}.nic{r['nic']} {r['state']}" for s in windows
                        for r in s.anomalous_rnics()})
        self.assertEqual(rnics, [], "RNICs blamed for fabric faults")

    def assertNicIncident(self, what: str, event: str, host: str, nic: str, link: str,
                          kind: str) -> tuple[dict, dict[int, dict]]:
        """A phase-2 fault of a NIC or its cable: one incident of `kind` about
        the NIC or the cable, named within 5 minutes and held. Returns it and
        every incident opened in phase 2."""
        t = self.tl.at[event]
        windows = self.phase2()
        opened = self.tl.opened(windows, self.before(t))
        related = self.about_nic(opened, host, nic, link)

        def named(s: e2e.Snapshot) -> bool:
            return any(inc["id"] in related and inc["kind"] == kind
                       for inc in s.incidents["open"])

        first = self.assertNamedAndHeld(what, windows, t, named, related)
        inc = self.assertOneIncident(what, related, (kind,), first.end_s, windows[-1].end_s)
        return inc, opened

    def test_2a_flapping_nic_one_flapping_incident_no_link_blamed(self):
        _, opened = self.assertNicIncident(f"{FLAP_HOST}.{FLAP_NIC} flapping", "flap", FLAP_HOST,
                                           FLAP_NIC, FLAP_LINK, "flapping")
        links = [inc for inc in opened.values() if inc["kind"] in LINK_KINDS]
        self.assertEqual(e2e.describe_incidents(links), [], "link or switch incidents opened in phase 2")
        self.assertEqual(self.unexpected_culprits(self.phase2(), nic_links=True), [],
                         "links blamed for a flapping NIC")

    def test_2b_lossy_access_link_is_a_lossy_rnic_no_fabric_link_blamed(self):
        inc, opened = self.assertNicIncident(
            f"{LOSSY_HOST}.{LOSSY_NIC} ({LOSSY_PERCENT}% on its access link)", "lossy",
            LOSSY_HOST, LOSSY_NIC, LOSSY_LINK, "rnic_lossy")
        # Every probe to or from the NIC crosses its cable once: about 5% of them lost.
        loss = inc["evidence"]["loss"]
        self.assertTrue(0.025 <= loss <= 0.10, f"loss estimate {loss} for a 5% loss: "
                                               f"{e2e.describe_incidents([inc])}")
        links = [inc for inc in opened.values() if inc["kind"] in LINK_KINDS]
        self.assertEqual(e2e.describe_incidents(links), [], "link or switch incidents opened in phase 2")
        self.assertEqual(self.unexpected_culprits(self.phase2(), nic_links=False), [],
                         "fabric links blamed for a lossy NIC cable")

    def test_2d_small_lossy_cable_beside_a_small_link_held_one_incident(self):
        inc, opened = self.assertNicIncident(
            f"{CABLE_HOST}.{CABLE_NIC} ({CABLE_PERCENT}% on its access link, beside {SMALL})",
            "cable", CABLE_HOST, CABLE_NIC, CABLE_LINK, "rnic_lossy")
        # Above 1% rather than below: a quarter of its probes also cross the
        # 1% link, and it is named on a window that lost more than most
        # (1.3-2.2% on this fabric, the pooled rate settling near 1.5%).
        loss = inc["evidence"]["loss"]
        self.assertTrue(0.005 <= loss <= 0.025, f"loss estimate {loss} for a 1% loss: "
                                                f"{e2e.describe_incidents([inc])}")
        # Both faults are under rail switch p0r0: it explains neither.
        rail = CABLE_LINK.split("-")[1]
        switch = [i for i in opened.values() if e2e.suspect_name(i) == rail]
        self.assertEqual(e2e.describe_incidents(switch), [], f"rail switch {rail} blamed for a lossy cable "
                                               f"and {SMALL} under it")

    def unexpected_culprits(self, windows: list[e2e.Snapshot], nic_links: bool) -> list[str]:
        """Culprit links of phase-2 windows that no fault explains: the gray
        link and the lossy cable are faults; p0r0-s00 and s01's links were
        until phase 2 began, and stay excused while their incident is open.
        Fabric links only, or NIC links too."""
        out = set()
        for s in windows:
            allowed = {GRAY, LOSSY_LINK, CABLE_LINK}
            open_about = {e2e.suspect_name(i) for i in s.incidents["open"]}
            if SMALL in open_about:
                allowed.add(SMALL)
            if SPINE in open_about or any(on_switch(n, SPINE) for n in open_about):
                allowed |= {f"p0r{r}-{SPINE}" for r in range(self.RAILS)}
            for link in s.culprits():
                name = e2e.link_name(link)
                if name not in allowed and (nic_links or not name.startswith("h")):
                    end = time.strftime("%H:%M:%S", time.localtime(s.end_s))
                    out.add(f"{name} (window ending {end})")
        return sorted(out)

    def test_2c_phase2_nothing_else_blamed_and_cleared_faults_resolve(self):
        windows = self.phase2()
        opened = self.tl.opened(windows, self.before(self.tl.at["flap"]))
        mine = (f"{FLAP_HOST}.{FLAP_NIC}", FLAP_LINK, f"{LOSSY_HOST}.{LOSSY_NIC}", LOSSY_LINK,
                f"{CABLE_HOST}.{CABLE_NIC}", CABLE_LINK)
        others = [inc for inc in opened.values() if e2e.suspect_name(inc) not in mine]
        self.assertEqual(e2e.describe_incidents(others), [], "incidents on parts that are not faulty")
        rnics = sorted({f"{r['host']}.nic{r['nic']} {r['state']}" for s in windows
                        for r in s.anomalous_rnics()
                        if (r["host"], f"nic{r['nic']}") not in ((FLAP_HOST, FLAP_NIC),
                                                                 (LOSSY_HOST, LOSSY_NIC),
                                                                 (CABLE_HOST, CABLE_NIC))})
        self.assertEqual(rnics, [], "other RNICs blamed")
        # Cleared at the start of phase 2: its incident resolves within it.
        last = windows[-1]
        lingering = [inc for inc in last.incidents["open"]
                     if on_switch(e2e.suspect_name(inc), SPINE)]
        self.assertEqual(e2e.describe_incidents(lingering), [], f"incidents still open "
                         f"{last.end_s - self.tl.at['cleared']:.0f} s after their faults were "
                         "cleared")

    def test_3_gray_link_ranked_first_for_10_minutes_one_incident(self):
        t = self.tl.at["gray"]
        # Every window that holds the fault all through, to 10 minutes on.
        windows = self.tl.whole(t)
        self.assertTrue(windows and windows[-1].end_s >= t + GRAY_S,
                        f"the timeline ends before {GRAY_S} s of the gray link")
        windows = [s for s in windows if s.end_s <= t + GRAY_S + W]
        not_first = [s.describe() for s in windows if not (
            s.links and e2e.link_name(s.links[0]) == GRAY and s.links[0]["culprit"])]
        self.assertEqual(not_first, [], f"{GRAY} not ranked first (a culprit) in "
                                        f"{len(not_first)} of {len(windows)} windows")
        opened = self.tl.opened(self.tl.between(t), self.before(t))
        self.assertOneIncident(f"gray {GRAY}", self.link_incidents(opened, GRAY), ("link_loss",),
                               windows[0].end_s, windows[-1].end_s)


if __name__ == "__main__":
    e2e.main()
