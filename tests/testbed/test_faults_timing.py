"""Faults that slow things down, measured on a 2 hosts x 2 rails x 2 spines
fabric: delay (NFQUEUE + hostmesh-delayq, one-way delay from kernel receive
timestamps), congestion (tbf + background UDP) and cpu (a host's agent and
stress-ng confined to a CPU cgroup with a quota). Needs root; exits 77
(skipped) otherwise. The delay tests need hostmesh-delayq built in
HOSTMESH_BUILD_DIR (ctest sets it), the agent's cpu test the agent and
analyzer; they skip without.

These run on a shared 2-core machine beside other tests, so they assert what
the mechanisms guarantee, with headroom for scheduling above: a delay holds
every packet at least its milliseconds, an unaffected path gains less than
half of it, a quota caps the CPU a cgroup used over the time it was measured.
How precise the delay is belongs to bench/delay_fault_accuracy.py.
"""

import json
import os
import statistics
import subprocess
import threading
import time
import unittest

import harness
from hmfabric import cpu_cgroup, faults, netns, start_cmd
from hmfabric import fault_probe as fp

SPORTS = range(40000, 40060)
LINK = "p0r0-s00"


def fault(*args: str) -> str:
    return harness.fabric("fault", *args).stdout.strip()


# hostmesh-delayq dates a packet's arrival back by its typical wake-up latency
# (deploy/testbed/delayq/alarm.cpp, at most kMaxLead), so a packet that woke it
# faster than typical leaves up to that much before its delay has passed.
DELAYQ_MAX_BACKDATE_MS = 0.2
# What a loaded 2-core machine may add on top of a delay, in the median of a
# measurement: wake-ups of the queue program and of the prober. The bound
# catches a delay that is missing, doubled or in the wrong unit, not a jitter.
SCHEDULING_HEADROOM_MS = 2.0


def median_ms(stats: dict) -> float:
    return statistics.median(fp.total(stats).delays_ns) / 1e6


def min_ms(stats: dict) -> float:
    return min(fp.total(stats).delays_ns) / 1e6


class TimingFaults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fab = harness.Fabric(hosts=2, rails=2, spines=2).up()
        lay = cls.fab.layout
        cls.nic0, cls.nic1 = lay.nic_link(0, 0).a, lay.nic_link(0, 1).a
        paths = fp.ports_by_path(lay, cls.nic0.ip, cls.nic1.ip, SPORTS)
        cls.via = [p for p, hops in paths.items() if "s00" in hops][:10]
        cls.other = [p for p, hops in paths.items() if "s00" not in hops][:10]
        assert len(cls.via) == len(cls.other) == 10, paths
        cls.clean = fp.fabric_state(lay.namespaces)

    @classmethod
    def tearDownClass(cls):
        cls.fab.down()

    def tearDown(self):
        fault("clear")
        self.assertEqual(fp.fabric_state(self.fab.layout.namespaces), self.clean)

    def probe(self, sports, count=20, interval=0.005, wait=0.5):
        return fp.measure(self.fab.ns("h000"), ("nic0", self.nic0.ip), ("nic1", self.nic1.ip),
                          sports, count, interval=interval, wait=wait)

    def require_delayq(self):
        build = os.environ.get(faults.BUILD_DIR_ENV) or os.path.join(faults.REPO_DIR, "build")
        if not os.access(os.path.join(build, faults.DELAYQ), os.X_OK):
            self.skipTest(f"hostmesh-delayq is not built in {build}")

    def check_delay(self, ms: float):
        self.require_delayq()
        base_via, base_other = median_ms(self.probe(self.via)), median_ms(self.probe(self.other))
        fid = fault("add", "delay", "--link", LINK, "--ms", str(ms), "--from", "p0r0")
        via, other = self.probe(self.via), self.probe(self.other)
        added, untouched = median_ms(via) - base_via, median_ms(other) - base_other
        print(f"\ndelay {ms} ms: +{added:.3f} ms crossing ({(added / ms - 1) * 100:+.1f}%), "
              f"fastest {min_ms(via):.3f} ms, +{untouched:.3f} ms not crossing; baseline "
              f"{base_via:.3f} ms")
        self.assertEqual(fp.total(via).lost, 0)
        self.assertDelayed(via, added, ms)
        self.assertLess(untouched, ms / 2, "a path that does not cross the link was delayed")
        [entry] = json.loads(fault("list"))
        [proc] = entry["processes"]
        self.assertEqual((entry["id"], proc["role"], proc["namespace"], proc["alive"]),
                         (fid, "delayq", self.fab.ns("p0r0"), True))
        return proc["pid"]

    def assertDelayed(self, stats: dict, added_ms: float, ms: float) -> None:
        """Every packet held at least `ms` (less what the queue may back-date),
        the median no more than `ms` and the scheduling headroom above it."""
        self.assertGreaterEqual(min_ms(stats), ms - DELAYQ_MAX_BACKDATE_MS,
                                "a packet crossed the delayed link early")
        self.assertLessEqual(added_ms, ms + SCHEDULING_HEADROOM_MS)

    def test_delay_1ms(self):
        self.check_delay(1)

    def test_delay_10ms_and_clear_stops_the_program(self):
        pid = self.check_delay(10)
        fault("clear")
        self.assertFalse(os.path.exists(f"/proc/{pid}/cmdline") and netns.running(pid))
        # Gone, not just smaller: half the cleared delay, as for an untouched path
        # (a loaded machine's probes alone can take over a millisecond).
        self.assertLess(median_ms(self.probe(self.via, count=5)), 10 / 2,
                        "the delay outlived its clear")

    def test_wire_delay_holds_every_probe_at_every_spine(self):
        self.require_delayq()
        base = median_ms(self.probe(self.via + self.other))
        fid = fault("add", "wire-delay", "--ms", "1")
        via, other = self.probe(self.via), self.probe(self.other)
        added_via, added_other = median_ms(via) - base, median_ms(other) - base
        print(f"\nwire-delay 1 ms: +{added_via:.3f} ms via s00, +{added_other:.3f} ms via s01")
        self.assertEqual(fp.total(via).lost + fp.total(other).lost, 0)
        # Every path crosses one spine once.
        self.assertDelayed(via, added_via, 1.0)
        self.assertDelayed(other, added_other, 1.0)
        [entry] = json.loads(fault("list"))
        self.assertEqual(entry["id"], fid)
        self.assertEqual(sorted(p["namespace"] for p in entry["processes"]),
                         sorted(self.fab.ns(s) for s in ("s00", "s01")))
        # It holds the spine ports' delay slot: a delay there conflicts.
        busy = harness.fabric("fault", "add", "delay", "--link", LINK, "--ms", "1", "--from",
                              "s00", check=False)
        self.assertNotEqual(busy.returncode, 0)
        self.assertIn("delay", busy.stderr)

    def test_clears_release_held_packets_instead_of_dropping_them(self):
        self.require_delayq()
        # Held 5 s, cleared after 0.6 s: the probe listens 4.2 s, so every packet
        # that arrives was released by the clear, however long the clear itself
        # took on a busy machine (starting `fabric` takes a while under load).
        held = fault("add", "delay", "--link", LINK, "--ms", "5000", "--from", "p0r0")
        # Another fault in the same namespace: its clear must not flush the queue.
        other = fault("add", "gray", "--link", "h001.nic0-p0r0", "--from", "p0r0")
        t0, done = time.monotonic(), {}

        def clear(fid: str) -> None:
            fault("clear", fid)
            done[fid] = time.monotonic() - t0

        timers = [threading.Timer(0.3, clear, (other,)), threading.Timer(0.6, clear, (held,))]
        for timer in timers:
            timer.start()
        stats = fp.total(self.probe(self.via[:5], count=10, interval=0.02, wait=4.0))
        for timer in timers:
            timer.join()
        print(f"\ndelay 5 s cleared after 0.6 s (the clears returned at "
              f"{done.get(other, -1):.2f} and {done.get(held, -1):.2f} s): {stats.received}/"
              f"{stats.sent} arrived, after {min(stats.delays_ns, default=0) / 1e6:.0f}.."
              f"{max(stats.delays_ns, default=0) / 1e6:.0f} ms")
        self.assertEqual(stats.received, stats.sent)
        self.assertLess(max(stats.delays_ns) / 1e6, 4500)

    def test_congestion_queues_and_drops_on_the_shaped_link_only(self):
        base_via, base_other = median_ms(self.probe(self.via)), median_ms(self.probe(self.other))
        fault("add", "congestion", "--link", LINK, "--rate", "5mbit", "--from", "p0r0")
        time.sleep(0.3)  # let the filler fill the queue
        via, other = fp.total(self.probe(self.via)), fp.total(self.probe(self.other))
        added = statistics.median(via.delays_ns) / 1e6 - base_via
        untouched = statistics.median(other.delays_ns) / 1e6 - base_other
        print(f"\ncongestion 5mbit: +{added:.2f} ms and {via.lost}/{via.sent} lost crossing, "
              f"+{untouched:.3f} ms and {other.lost}/{other.sent} lost not crossing")
        self.assertGreater(added, 5)  # a 20 ms queue kept full by the filler
        self.assertGreater(via.lost, 0)
        self.assertLess(untouched, 1)
        self.assertEqual(other.lost, 0)
        [entry] = json.loads(fault("list"))
        self.assertEqual([p["role"] for p in entry["processes"]], ["blast"])
        self.assertEqual(entry["params"]["rate_bps"], 5_000_000)

    def test_cpu_confines_stress_ng_to_the_hosts_budget(self):
        fid = fault("add", "cpu", "--host", "h001", "--cpus", "0.2", "--workers", "2")
        [entry] = json.loads(fault("list"))
        [proc] = entry["processes"]
        ns = subprocess.run(["ip", "netns", "identify", str(proc["pid"])], capture_output=True,
                            text=True, check=True).stdout.strip()
        self.assertEqual(ns, self.fab.ns("h001"))
        with open(f"/proc/{proc['pid']}/comm") as f:
            self.assertEqual(f.read().strip(), "stress-ng")
        version, mount = cpu_cgroup.hierarchy()
        cgroup = "/" + cpu_cgroup.name_for(harness.PREFIX, fid)
        self.assertEqual(cpu_cgroup.quota_of(version, mount, cgroup), (20_000, 100_000))
        workers = _children(proc["pid"])
        self.assertEqual(len(workers), 2)
        self.assertEqual({cpu_cgroup.cgroup_of(p, version) for p in [proc["pid"], *workers]},
                         {cgroup})
        # Two workers at 100% would burn 2 CPU-seconds per second; the quota allows
        # 0.2 per second of wall time, however long the measurement really took
        # (a sleep on a busy machine overruns), plus one quota period of burst
        # and a clock tick of accounting granularity per worker.
        busy, wall = _cpu_seconds_of_children(proc["pid"], wait=1.0)
        print(f"\ncpu: stress-ng {proc['pid']} in {ns} and {mount}{cgroup}, its 2 workers used "
              f"{busy:.2f} s CPU in {wall:.2f} s (quota 0.2 CPU)")
        self.assertGreater(busy, 0.05)  # it runs: the quota, not a dead load
        tick = 1 / os.sysconf("SC_CLK_TCK")
        self.assertLessEqual(busy, 0.2 * (wall + 0.1) + 2 * tick)
        fault("clear")
        self.assertFalse(netns.running(proc["pid"]))
        self.assertFalse(os.path.exists(mount + cgroup))

    def test_cpu_moves_the_hosts_agent_in_and_back(self):
        try:
            start_cmd.binaries(None)
        except ValueError as exc:
            self.skipTest(str(exc))
        harness.fabric("start", "--window", "10s")
        try:
            [agent], [other] = (start_cmd.running_pids(harness.PREFIX, h) for h in ("h001", "h000"))
            version, mount = cpu_cgroup.hierarchy()
            home = cpu_cgroup.cgroup_of(agent, version)
            fid = fault("add", "cpu", "--host", "h001", "--workers", "1")
            cgroup = "/" + cpu_cgroup.name_for(harness.PREFIX, fid)
            # Every thread of the agent (prober, uploader, tracer, metrics) is starved.
            threads = os.listdir(f"/proc/{agent}/task")
            self.assertGreater(len(threads), 1)
            self.assertEqual({cpu_cgroup.cgroup_of(int(t), version) for t in threads}, {cgroup})
            self.assertEqual(cpu_cgroup.cgroup_of(other, version), home)
            [entry] = json.loads(fault("list"))
            self.assertTrue(entry["touched"][0]["what"].endswith(f"moved in: {agent}"),
                            entry["touched"])
            fault("clear")
            self.assertTrue(netns.running(agent))
            self.assertEqual(cpu_cgroup.cgroup_of(agent, version), home)
            self.assertFalse(os.path.exists(mount + cgroup))
        finally:
            harness.fabric("stop")


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[1] == str(pid):
                    out.append(int(entry))
        except (OSError, IndexError):
            continue
    return out


def _cpu_seconds_of_children(pid: int, wait: float) -> tuple[float, float]:
    """CPU time the children of `pid` used while the caller slept `wait`
    seconds, and the wall time that really passed between the two readings."""
    def total() -> float:
        ticks = 0
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[1] == str(pid):  # ppid
                ticks += int(fields[11]) + int(fields[12])  # utime + stime
        return ticks / os.sysconf("SC_CLK_TCK")

    t0, before = time.monotonic(), total()
    time.sleep(wait)
    after, t1 = total(), time.monotonic()
    return after - before, t1 - t0


if __name__ == "__main__":
    harness.main()
