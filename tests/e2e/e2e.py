"""Shared helpers of the end-to-end tests (tests/e2e/test_*.py): a real
fabric, the real analyzer and one real agent per host (`fabric start`), and
the analyzer's verdicts read through its HTTP API from inside the management
namespace (`fabric exec mgmt -- curl`).

    import e2e
    class T(e2e.FabricTestCase):       # 8x4x4, window 10 s, grace 5 s
        def test_x(self):
            self.wait_healthy_window()
            t = self.inject("gray", "--link", "p0r0-s00")
            ...
    if __name__ == "__main__":
        e2e.main()                      # exit 77 (skipped) without root or netns

Every wait is bounded by a deadline (generous: a loaded 2-core machine).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testbed"))
import harness  # noqa: E402  (also puts deploy/testbed on sys.path)
from hmfabric import layout  # noqa: E402

API = "http://198.19.128.1:8080/api/v1/"
WINDOW_S = 10
GRACE_S = 5


def main() -> None:
    harness.main()  # root + netns or exit 77; `fabric down` at exit whatever happens


def fabric(*args: str, check: bool = True):
    return harness.fabric(*args, check=check)


def api(endpoint: str) -> dict | None:
    """GET /api/v1/<endpoint> as JSON, or None when it does not answer (yet).
    Straight through `ip netns exec` (not `fabric exec`, a Python start-up per
    call): tests poll this every second, on the machine they measure."""
    proc = subprocess.run(["ip", "netns", "exec", layout.namespace(layout.MGMT_DEVICE,
                                                                   harness.PREFIX),
                           "curl", "-sf", "-m", "5", API + endpoint],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None
    try:
        return json.loads(proc.stdout)
    except ValueError:
        return None


def traced(fraction: float) -> bool:
    """True when at least `fraction` of the latest window's probes had a traced path."""
    cov = api("coverage") or {}
    traced_n, untraced_n = cov.get("traced_probes", 0), cov.get("untraced_probes", 0)
    total = traced_n + untraced_n
    return total > 0 and traced_n >= fraction * total


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Snapshot:
    """status, rnics, links and incidents read together for one judged window."""

    def __init__(self, end_ns: int, rnics: dict, links: dict, incidents: dict,
                 status: dict | None = None):
        self.end_s = end_ns / 1e9
        self.start_s = (rnics["window"] or {}).get("start_ns", end_ns) / 1e9
        self.rnics = rnics["rnics"]
        self.links = links["links"]
        self.incidents = incidents
        self.status = status or {}

    def culprits(self) -> list[dict]:
        return [l for l in self.links if l["culprit"]]

    def anomalous_rnics(self) -> list[dict]:
        return [r for r in self.rnics if r["anomalous"]]

    def rnic(self, host: str, nic: int) -> dict | None:
        return next((r for r in self.rnics if r["host"] == host and r["nic"] == nic), None)

    def describe(self) -> str:
        links = [f"#{l['rank']} {link_name(l)} culprit={l['culprit']} loss={l['loss']:.2f} "
                 f"fail={l['failures']} good={l['good']}" for l in self.links[:3]]
        rnics = [f"{r['host']}.nic{r['nic']} {r['state']} anomalous={r['anomalous']} "
                 f"loss={r['loss']:.2f}" for r in self.rnics if r["state"] != "ok" or r["anomalous"]]
        incs = [f"{i['kind']} {i['summary']} conf={i['confidence']:.2f}"
                for i in self.incidents["open"]]
        return (f"window ending {time.strftime('%H:%M:%S', time.localtime(self.end_s))}: "
                f"links {links or '[]'}; rnics not ok {rnics or '[]'}; open incidents "
                f"{incs or '[]'}")


def read_snapshot(newer_than_s: float = 0.0) -> Snapshot | None:
    """The judged window now served, if it ends after `newer_than_s` (Unix
    seconds); None before the first one, or when it is not newer. Status is
    read before and after the others, so all belong to the same window; the
    others are only read for a new window (this is polled every second)."""
    for _ in range(3):
        status = api("status")
        if not status or not status.get("window"):
            return None
        end = status["window"]["end_ns"]
        if end / 1e9 <= newer_than_s:
            return None
        rnics, links, incidents = api("rnics"), api("links"), api("incidents")
        after = api("status")
        if None in (rnics, links, incidents, after):
            return None
        if ((rnics["window"] or {}).get("end_ns") == end == (links["window"] or {}).get("end_ns")
                == (after.get("window") or {}).get("end_ns")):
            return Snapshot(end, rnics, links, incidents, after)
    return None


def false_verdicts(snap: Snapshot, allowed: set[str] | frozenset[str] = frozenset(),
                   since_s: float = 0.0) -> list[str]:
    """What `snap` blames beyond `allowed` (names as suspect_name gives them:
    links, RNICs, switches): culprit links, anomalous RNICs, and open
    incidents first seen at or after `since_s` (Unix seconds)."""
    out = [f"{link_name(l)} culprit" for l in snap.culprits() if link_name(l) not in allowed]
    out += [f"{r['host']}.nic{r['nic']} {r['state']}" for r in snap.anomalous_rnics()
            if f"{r['host']}.nic{r['nic']}" not in allowed]
    out += [f"{i['kind']} {i['summary']}" for i in snap.incidents["open"]
            if i["first_seen_ns"] / 1e9 >= since_s and suspect_name(i) not in allowed]
    return out


def suspect_name(incident: dict) -> str:
    """What an incident blames, named as the fabric names it: a link
    (`p0r0-s00`, `h003.nic1-p0r1`), an RNIC (`h003.nic1`), a switch (`s01`)
    or a host (`h003`)."""
    sus = incident.get("suspect") or {}
    if sus.get("ends") is not None or "link" in sus:
        return link_name(sus)
    if "nic" in sus:
        return f"{sus.get('host')}.{sus.get('nic_name') or 'nic' + str(sus['nic'])}"
    if "switch" in sus:
        return sus.get("name", f"switch {sus['switch']}")
    return sus.get("host", "?")


def link_name(entry: dict) -> str:
    """The inventory name (`p0r0-s00`) of an API link entry, from its two ends;
    a learned link's own name (its addresses: its devices are addresses too)."""
    ends = entry.get("ends") or []
    if ends and ends[0].get("device", "")[:1].isdigit():
        return entry.get("name", "?")
    if len(ends) == 2 and all(e.get("device") for e in ends):
        lower, upper = ends
        if lower["device"].startswith("h"):
            return f"{lower['device']}.{lower['port']}-{upper['device']}"
        return f"{lower['device']}-{upper['device']}"
    return entry.get("name", "?")


class FabricTestCase(unittest.TestCase):
    HOSTS, RAILS, SPINES = 8, 4, 4
    START_ARGS: tuple[str, ...] = ()  # more `fabric start` flags, e.g. --agent-ports

    @classmethod
    def setUpClass(cls):
        t0 = time.monotonic()
        cls.warmed_up = False  # wait_healthy_window judges the warm-up once
        fabric("down", check=False)
        cls.fab = harness.Fabric(cls.HOSTS, cls.RAILS, cls.SPINES).up()
        try:
            out = fabric("start", "--window", f"{WINDOW_S}s", "--grace", f"{GRACE_S}s",
                         "--timeout", "120", *cls.START_ARGS)
        except BaseException:
            fabric("down", check=False)
            raise
        log(out.stdout.strip().splitlines()[0] + f" (fabric and start in "
            f"{time.monotonic() - t0:.1f} s)")

    @classmethod
    def tearDownClass(cls):
        fabric("stop", check=False)
        fabric("down", check=False)

    def snapshot(self) -> Snapshot | None:
        """The current judged window, or None before the first one."""
        return read_snapshot()

    def windows_until(self, until_s: float, deadline_s: float):
        """Yields each new judged window (Snapshot) in order, until one ends at or
        after `until_s` (Unix seconds); fails if that takes past `deadline_s`."""
        seen = 0.0
        while True:
            snap = read_snapshot(seen)
            if snap is not None and snap.end_s > seen:
                seen = snap.end_s
                log(snap.describe())
                yield snap
                if snap.end_s >= until_s:
                    return
            if time.time() > deadline_s:
                self.fail(f"no judged window ending at or after {until_s:.0f} by the deadline "
                          f"(last seen ending {seen:.0f}); status: {api('status')}")
            time.sleep(1.0)

    def wait_healthy_window(self, timeout: float = 150.0) -> Snapshot:
        """Until a judged window with every agent present, no culprit link, no
        anomalous RNIC, and the probes' paths traced (the steady state of a
        deployed fleet: the agents' tracers have done their first pass, so a
        fault is localized over known paths, not guessed from untraced ones).

        The fabric's first call judges its warm-up: the first window with
        every agent present and its paths traced must be clean (no culprit,
        anomalous RNIC or open incident), or the test fails. The windows
        before it are grace, logged with what they blamed: an agent not yet
        heard from is absent from them, and until the tracers' first pass
        (40 traces/s per host) most probes' paths are unknown. Later calls
        wait for the fabric to recover from a fault the test caused."""
        cls = type(self)
        judge_warm_up = not getattr(cls, "warmed_up", True)
        deadline = time.time() + timeout
        last = None
        grace = 0
        for snap in self.windows_until(math.inf, deadline):
            last = snap
            status = api("status") or {}
            present = status.get("agents_present") == self.HOSTS
            ready = present and traced(0.95)
            if judge_warm_up and not ready:
                grace += 1
                log(f"warm-up window {grace} (agents present {status.get('agents_present')}, "
                    f"paths traced: {traced(0.95)}): blamed {false_verdicts(snap) or 'nothing'}")
                continue
            if judge_warm_up:
                blamed = false_verdicts(snap)
                if blamed:
                    self.fail(f"a fault-free fabric's first window with every agent present and "
                              f"its paths traced (after {grace} warm-up windows) blamed "
                              f"{blamed}: {snap.describe()}")
                cls.warmed_up = True
                log(f"warm-up: {grace} window(s) of grace, then a clean traced window")
                return snap
            if ready and not snap.culprits() and not snap.anomalous_rnics():
                return snap
        self.fail(f"no healthy window: {last.describe() if last else None}")

    def inject(self, kind: str, *args: str) -> float:
        """`fabric fault add KIND ARGS`; returns the injection time (Unix seconds)."""
        t = time.time()
        out = fabric("fault", "add", kind, *args)
        log(f"fault {kind} {' '.join(args)}: {out.stdout.strip()}")
        return t

    @staticmethod
    def windows_after(t: float, n: int) -> float:
        """End (Unix seconds) of the n-th full window after time t."""
        return math.ceil(t / WINDOW_S) * WINDOW_S + n * WINDOW_S

    @staticmethod
    def deadline_for(window_end: float) -> float:
        """When the analyzer must have judged the window ending then: its grace,
        a judging period, and slack for a loaded machine."""
        return window_end + GRACE_S + WINDOW_S + 45


class Timeline:
    """Every judged window of the run, in order, with what was done when."""

    def __init__(self):
        self.snaps: list[Snapshot] = []
        self.at: dict[str, float] = {}  # event -> Unix time it was done
        self.fault_ids: dict[str, str] = {}

    def add(self, name: str, kind: str, *args: str):
        """An action for record(): `fabric fault add KIND ARGS`, its id kept as `name`."""
        def do():
            self.fault_ids[name] = fabric("fault", "add", kind, *args).stdout.strip()
            log(f"fault {name}: {kind} {' '.join(args)} -> {self.fault_ids[name]}")
        return do

    def clear(self, *names: str):
        """An action for record(): clears the faults added as `names`."""
        def do():
            for name in names:
                fabric("fault", "clear", self.fault_ids[name])
            log(f"cleared {', '.join(names)}")
        return do

    def record(self, until_s: float, actions: list[tuple[float, str, callable]],
               on_window=None) -> None:
        """Polls judged windows until one ends at or after `until_s`, doing
        each action (Unix time, name, fn) once its time has come, and calling
        `on_window(snap)` on each window as it is recorded (to read more of
        the API about that same window)."""
        pending = sorted(actions, key=lambda a: a[0])
        deadline = max([until_s] + [a[0] for a in pending]) + GRACE_S + WINDOW_S + 90
        while True:
            while pending and time.time() >= pending[0][0]:
                _, name, fn = pending.pop(0)
                fn()
                self.at[name] = time.time()
            seen = self.snaps[-1].end_s if self.snaps else 0.0
            snap = read_snapshot(seen)
            if snap is not None:
                self.snaps.append(snap)
                log(snap.describe())
                if on_window is not None:
                    on_window(snap)
                if snap.end_s >= until_s and not pending:
                    return
            if time.time() > deadline:
                raise AssertionError(f"no judged window ending at or after {until_s:.0f} by the "
                                     f"deadline (last ending {seen:.0f}); status: "
                                     f"{api('status')}")
            time.sleep(1.0)

    def between(self, after_s: float, until_s: float = math.inf) -> list[Snapshot]:
        """Windows ending after `after_s` and at or before `until_s`."""
        return [s for s in self.snaps if after_s < s.end_s <= until_s]

    def whole(self, from_s: float, until_s: float = math.inf) -> list[Snapshot]:
        """Windows that start at or after `from_s` and end by `until_s`."""
        return [s for s in self.snaps if s.start_s >= from_s and s.end_s <= until_s]

    def incidents(self, windows: list[Snapshot]) -> dict[int, dict]:
        """Every incident (open or resolved) served in those windows, by id, as
        last served, with `first_window_end` (the first of those windows that
        served it) and `open_in` (ends of the windows in which it was open)."""
        out: dict[int, dict] = {}
        for snap in windows:
            for state in ("open", "resolved"):
                for inc in snap.incidents.get(state, []):
                    entry = out.setdefault(inc["id"], {"first_window_end": snap.end_s,
                                                       "open_in": []})
                    entry.update(inc)
                    if state == "open":
                        entry["open_in"].append(snap.end_s)
        return out

    def opened(self, windows: list[Snapshot], before: list[Snapshot]) -> dict[int, dict]:
        """Incidents served in `windows` that no window of `before` served."""
        old = self.incidents(before)
        return {i: inc for i, inc in self.incidents(windows).items() if i not in old}


def describe_incidents(incidents) -> list[str]:
    return [f"#{i['id']} {i['kind']} {suspect_name(i)} ({i.get('summary', '')}; "
            f"{'open' if i.get('open') else 'resolved'})" for i in incidents]


class TimelineCase(FabricTestCase):
    """Tests asserted from one shared timeline: setUpClass brings the fabric up
    and runs `run_timeline` (faults injected, every judged window recorded);
    each test then asserts its own property from the recorded windows. A
    timeline that stops early fails every test with its error."""

    timeline: "Timeline | None" = None
    error: BaseException | None = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.timeline = Timeline()
        try:
            cls.run_timeline(cls.timeline)
        except BaseException as exc:  # noqa: BLE001  (each test reports it)
            cls.error = exc
            log(f"timeline stopped: {exc!r}")

    @classmethod
    def run_timeline(cls, tl: "Timeline") -> None:
        raise NotImplementedError

    def setUp(self):
        if self.error is not None:
            raise AssertionError(f"the shared timeline did not complete: {self.error!r}")

    @property
    def tl(self) -> "Timeline":
        return self.timeline

    def before(self, t: float) -> list[Snapshot]:
        return [s for s in self.tl.snaps if s.end_s <= t]


class BuildLoad:
    """A parallel build beside the fabric, in the root namespace, as a developer's
    or CI's would run: `make -j JOBS` of the project's own compile commands
    (from the build tree's compile_commands.json, ccache off, objects thrown
    away), started over until stop(). Not niced: it competes with the agents
    and the analyzer for the CPUs as a real build does."""

    SOURCES = ("analyzer/", "topology/", "agent/", "common/", "tracer/")

    def __init__(self, jobs: int = os.cpu_count() or 2):
        self.jobs = jobs
        self.proc: subprocess.Popen | None = None
        self.dir = tempfile.mkdtemp(prefix="hostmesh-e2e-load-")

    def start(self) -> "BuildLoad":
        build = os.environ.get("HOSTMESH_BUILD_DIR") or os.path.join(harness.SOURCE_DIR, "build")
        db = os.path.join(build, "compile_commands.json")
        with open(db) as f:
            entries = [e for e in json.load(f) if any(
                os.path.relpath(e["file"], harness.SOURCE_DIR).startswith(d) for d in self.SOURCES)]
        if not entries:
            raise AssertionError(f"no compile commands of {self.SOURCES} in {db}")
        rules, targets = [], []
        for i, entry in enumerate(entries):
            argv = shlex.split(entry["command"]) if "command" in entry else entry["arguments"]
            if os.path.basename(argv[0]) == "ccache":
                argv = argv[1:]
            out = os.path.join(self.dir, f"{i}.o")
            kept, skip = [], False
            for arg in argv:  # our own object, no dependency files in the build tree
                if skip:
                    skip = False
                elif arg in ("-o", "-MF", "-MT", "-MQ"):
                    skip = True
                    if arg == "-o":
                        kept += ["-o", out]
                elif arg not in ("-MD", "-MMD"):
                    kept.append(arg)
            targets.append(out)
            rules.append(f"{out}:\n\tcd {shlex.quote(entry['directory'])} && "
                         f"{shlex.join(kept)}\n")
        with open(os.path.join(self.dir, "Makefile"), "w") as f:
            f.write(f".PHONY: all\nall: {' '.join(targets)}\n" + "".join(rules))
        script = (f"while :; do make -s -k -B -j{self.jobs} -C {shlex.quote(self.dir)} "
                  f">/dev/null 2>&1; echo x >> {shlex.quote(self.dir)}/rounds; done")
        self.cpu_before = _cpu_times()
        self.proc = subprocess.Popen(["sh", "-c", script], env=dict(os.environ, CCACHE_DISABLE="1"),
                                     start_new_session=True)
        log(f"build load: make -j{self.jobs} of {len(entries)} compile commands, over and over "
            f"(pid {self.proc.pid})")
        return self

    def stop(self) -> str:
        """Stops it (its whole process group) and says how busy the machine was."""
        if self.proc is None:
            return "no load"
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait()
        self.proc = None
        busy, total = (b - a for a, b in zip(self.cpu_before, _cpu_times()))
        objects = len([n for n in os.listdir(self.dir) if n.endswith(".o")])
        rounds = 0
        with contextlib.suppress(FileNotFoundError), open(os.path.join(self.dir, "rounds")) as f:
            rounds = len(f.readlines())
        shutil.rmtree(self.dir, ignore_errors=True)
        return (f"build load stopped: {rounds} full rounds, {objects} objects in the last; "
                f"machine busy {100 * busy / max(total, 1):.0f}% of its CPU time meanwhile, load "
                f"average {os.getloadavg()[0]:.1f}")


def _cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)
