#!/usr/bin/env python3
"""rdma: one host of the fabric is a soft-RoCE VM (Debian's kernel under QEMU,
rdma_rxe on 3 NICs, each tapped to its rail switch), its agent on
`transport: auto`. Checks, in order on one boot: auto picks verbs and every
NIC rotates its source ports by QP; probes cross the fabric both ways with no
loss; every RoCEv2 source port seen on the wire (tcpdump in a rail switch) is
one the agent offered, and many are used; the analyzer traces those 5-tuples;
5% loss on a link and then a gray (100%) link are localized from the VM's
RoCE probes alone (it is the only host); rxe's own packet counters reach the
agent's /metrics and the analyzer and rise with the probes; a NIC's link taken
down in the guest pauses its probing (async port event, send failures, never
timeouts; rdma_port_up 0 meanwhile) and probing resumes when it comes back;
the probes carry the RoCE class (TOS 0x6a), rxe's stamps are reported as
software ones, no receive queue ran dry; a receive QP forced into the
error state (the agent's debug hook: no outside tool can reach its QPs) is
found through its flushed receives, reset to RTS, and probing to it resumes;
a NIC whose device is taken as failed (debug hook) is closed and reopened
with new send QPs and ports, and probing from and to it resumes. First of
all, the C++ verbs device tests run in the guest against rxe and must pass
(their results are in the log), and the debug hooks answer only on the
guest's loopback."""

import os
import re
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e  # noqa: E402
import harness  # noqa: E402

sys.path.insert(0, os.path.join(harness.TESTBED_DIR, "rxe"))
from hmfabric import layout  # noqa: E402
from hmrxe import initramfs, vm  # noqa: E402

HOST = "h000"
LINK = "p0r0-s00"
# The guest at 50 ms (20 probes/s per NIC) keeps TCG's CPU use moderate and
# gives the faulty link about 20 probes/s.
INTERVAL = "50ms"
# metrics.debug_hooks_listen's default: the guest's loopback.
DEBUG_HOOKS_PORT = 9101
# The verbs test binaries the guest carries, and the suites of each that
# must run (not skip) on rxe; VerbsTransportNoDevice checks a host without
# RDMA and skips here.
GUEST_TESTS = {
    "agent_verbs_verbs_transport_test": ["VerbsTransportDeviceTest"],
    "agent_verbs_device_discovery_test": ["DeviceDiscovery"],
}
MAY_SKIP_IN_GUEST = ["VerbsTransportNoDevice.OpenFailsWithAClearReasonAndNothingElseBreaks"]


def rxevm(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOSTMESH_FABRIC_PREFIX=harness.PREFIX)
    tool = os.path.join(os.path.dirname(vm.__file__), "..", "rxevm")
    build = os.environ.get("HOSTMESH_BUILD_DIR", "build")
    if args[0] == "boot":
        args = (*args, "--build", build)
    proc = subprocess.run([sys.executable, tool, *args], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"rxevm {' '.join(args)}: {proc.stdout}{proc.stderr}")
    return proc


def scrape(url: str) -> str:
    """A /metrics page, fetched from the management namespace."""
    proc = subprocess.run(["ip", "netns", "exec", layout.namespace(layout.MGMT_DEVICE,
                                                                   harness.PREFIX),
                           "curl", "-sf", "-m", "5", url], capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"{url} did not answer")
    return proc.stdout


def samples(text: str, name: str) -> dict[str, float]:
    """{labels: value} of one metric family in an exposition."""
    out = {}
    for m in re.finditer(rf"^{re.escape(name)}(\{{[^}}]*\}})? (\S+)$", text, re.M):
        out[m.group(1) or ""] = float(m.group(2))
    return out


def agent_metrics() -> str:
    return scrape(f"http://{layout.mgmt_ip(0)}:{layout.AGENT_METRICS_PORT}/metrics")


def guest(command: str) -> str:
    """What a shell command in the guest printed."""
    return rxevm("exec", HOST, command).stdout


def debug_hook(path: str) -> str:
    """POSTs to the agent's debug hooks (metrics.debug_hooks, on in the
    harness), from inside the guest: they listen on its loopback only."""
    url = f"http://127.0.0.1:{DEBUG_HOOKS_PORT}{path}"
    out = guest(f"wget -q -O- --post-data= '{url}' 2>&1; echo hm-rc=$?")
    if "hm-rc=0" not in out:
        raise AssertionError(f"POST {url} in the guest: {out}")
    return out.replace("hm-rc=0", "")


def run_guest_test(binary: str, timeout: float = 300) -> tuple[int, str]:
    """Runs a test binary the guest carries (rxevm's GUEST_TESTS) in the
    background (its pauses outlast the guest shell's idle timeout) and
    returns its exit code and output."""
    out = f"/tmp/{binary}.out"
    guest(f"({initramfs.GUEST_TEST_DIR}/{binary} >{out} 2>&1; echo hm-rc=$? >>{out}) &")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(2)
        text = guest(f"cat {out}")
        m = re.search(r"^hm-rc=(\d+)$", text, re.M)
        if m:
            return int(m.group(1)), text
    raise AssertionError(f"{binary} did not finish in {timeout:.0f} s in the guest: {text[-2000:]}")


def gtest_outcomes(text: str) -> dict[str, str]:
    """{Suite.Case: OK | FAILED | SKIPPED} from GoogleTest's console output."""
    out = {}
    for m in re.finditer(r"^\[\s+(OK|FAILED|SKIPPED)\s+\] (\w+\.\w+) \(", text, re.M):
        out[m.group(2)] = m.group(1)
    return out


def analyzer_metrics() -> str:
    return scrape(f"http://{layout.ANALYZER_IP}:{layout.ANALYZER_HTTP_PORT}/metrics")


class RxeFabric(e2e.FabricTestCase):
    HOSTS, RAILS, SPINES = 1, 3, 2
    START_ARGS = ("--no-agent", HOST)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        t0 = time.monotonic()
        try:
            out = rxevm("boot", HOST, "--transport", "auto", "--interval", INTERVAL)
        except BaseException:
            cls.tearDownClass()
            raise
        e2e.log(f"VM booted in {time.monotonic() - t0:.1f} s: "
                + re.sub(r"\s+", " ", out.stdout)[:400])
        cls.console = os.path.join(vm.vm_dir(harness.PREFIX), f"{HOST}.console")

    @classmethod
    def tearDownClass(cls):
        vm.stop_all(harness.PREFIX)
        super().tearDownClass()

    def agent_log(self) -> str:
        with open(self.console, errors="replace") as f:
            return f.read()

    def wire_ports(self, seconds: float) -> tuple[dict[str, set[int]], set[str]]:
        """RoCEv2 source ports per NIC address and the IP TOS bytes, seen in rail
        switch p0r0 and p0r1."""
        ports: dict[str, set[int]] = {}
        tos: set[str] = set()
        for sw in ("p0r0", "p0r1"):
            proc = subprocess.run(
                ["timeout", str(seconds), "ip", "netns", "exec", harness.PREFIX + sw, "tcpdump",
                 "-l", "-n", "-v", "-i", "any", "-Q", "in", "udp dst port 4791"],
                capture_output=True, text=True)
            tos.update(re.findall(r"\(tos (0x[0-9a-f]+)", proc.stdout))
            for m in re.finditer(r"(198\.18\.\d+\.\d+)\.(\d+) > [\d.]+\.4791", proc.stdout):
                ports.setdefault(m.group(1), set()).add(int(m.group(2)))
        return ports, tos

    def wait_agent_opened(self) -> str:
        """The agent's log once it has opened all 3 NICs (their QPs made)."""
        deadline = time.time() + 90
        while time.time() < deadline:
            text = self.agent_log()
            if (len(re.findall(r"source ports by (?:qp|flow_label)", text)) >= 3
                    and "agent h000 boot" in text):
                return text
            time.sleep(1)
        return self.agent_log()

    def test_0_verbs_device_tests_pass_in_the_guest(self):
        # The C++ verbs device tests (two QPs with four timestamps, address
        # handles per device port mode, a receive QP reset after an error, a
        # NIC reopened after DEVICE_FATAL through the async reader, the device
        # listing), run against rxe0..rxe2 beside the agent's own QPs. After
        # the agent has made its QPs: rxe numbers QPs in creation order, and
        # test_2 derives the agent's ports from the first QP numbers.
        text = self.wait_agent_opened()
        self.assertEqual(len(re.findall(r"source ports by qp \(\d+ send QPs", text)), 3, text)
        for binary, suites in GUEST_TESTS.items():
            with self.subTest(binary=binary):
                rc, text = run_guest_test(binary)
                outcomes = gtest_outcomes(text)
                e2e.log(f"guest {binary}: exit {rc}; " + "; ".join(
                    f"{name} {result}" for name, result in sorted(outcomes.items())))
                for line in text.splitlines():
                    if line.startswith("[   INFO   ]"):
                        e2e.log(f"guest {binary}: {line}")
                failed = [n for n, r in outcomes.items() if r == "FAILED"]
                skipped = [n for n, r in outcomes.items()
                           if r == "SKIPPED" and n not in MAY_SKIP_IN_GUEST]
                self.assertEqual(failed, [], text[-6000:])
                self.assertEqual(skipped, [], text[-6000:])
                self.assertEqual(rc, 0, text[-6000:])
                for suite in suites:
                    ran = [n for n, r in outcomes.items()
                           if n.startswith(suite + ".") and r == "OK"]
                    self.assertGreaterEqual(len(ran), 1, f"no {suite} test passed: {outcomes}")
        # The hooks are not on the metrics port, which the network reaches.
        url = f"http://{layout.mgmt_ip(0)}:{layout.AGENT_METRICS_PORT}/debug/qp-error?nic=nic2"
        proc = subprocess.run(["ip", "netns", "exec", layout.namespace(layout.MGMT_DEVICE,
                                                                       harness.PREFIX),
                               "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-m", "5",
                               "-X", "POST", url], capture_output=True, text=True)
        self.assertEqual(proc.stdout, "404", f"POST {url} from the network")

    def test_1_auto_picks_verbs_and_rotates_by_qp(self):
        text = self.wait_agent_opened()
        self.assertIn("using verbs for all 3 NICs", text)
        self.assertEqual(len(re.findall(r"source ports by qp \(\d+ send QPs", text)), 3, text)

    def test_2_probes_cross_and_wire_ports_are_the_offered_ones(self):
        snap = self.wait_healthy_window(timeout=240)
        e2e.log(f"healthy window: {snap.describe()}")
        seen, tos = self.wire_ports(6)
        self.assertEqual(sorted(seen), ["198.18.0.1", "198.18.0.3", "198.18.0.5"], seen)
        # The default traffic class 106 (DSCP 26, ECT(0)): the RoCE lossless class.
        e2e.log(f"IP TOS of the RoCE probes on the wire: {sorted(tos)}")
        self.assertEqual(tos, {"0x6a"}, tos)
        # The ports rdma_rxe gives the send QPs (0xC000 + hash_32(qpn, 14)):
        # the agent logs none, so derive the offer from the QPNs it may use.
        offered = {0xC000 + ((((q * 0x61C88647) & 0xFFFFFFFF) >> 18) & 0x3FFF)
                   for q in range(0x11, 0x11 + 64)}
        for ip, ports in seen.items():
            e2e.log(f"{ip}: {len(ports)} source ports on the wire: {sorted(ports)}")
            self.assertTrue(ports <= offered, f"{ip} sent from ports no QP has: "
                                              f"{sorted(ports - offered)}")
            self.assertGreaterEqual(len(ports), 8, f"{ip}: ports do not rotate: {ports}")
        self.assertTrue(e2e.traced(0.95), "the analyzer has not traced the probes' 5-tuples")

    def _localize(self, kind: str, *args: str, windows: int) -> None:
        self.wait_healthy_window(timeout=240)
        t = self.inject(kind, "--link", LINK, *args)
        try:
            bound = self.windows_after(t, windows)
            first = []
            last = None
            for snap in self.windows_until(bound, self.deadline_for(bound)):
                if snap.end_s <= t:
                    continue
                last = snap
                if snap.links and e2e.link_name(snap.links[0]) == LINK and snap.links[0]["culprit"]:
                    first.append(snap.end_s)
            self.assertTrue(first, f"{LINK} ({kind}) not ranked first within {windows} windows; "
                                   f"last: {last.describe() if last else None}")
            self.assertEqual([e2e.link_name(link) for link in last.culprits()], [LINK],
                             last.describe())
        finally:
            e2e.fabric("fault", "clear", check=False)

    # 5% first: a gray link truncates the traces through it, and the next
    # healthy window (95% traced) would wait for the tracer's refresh.
    def test_3_lossy_link_localized_from_roce_probes(self):
        self._localize("loss", "--percent", "5", windows=6)

    def test_4_gray_link_localized_from_roce_probes(self):
        self._localize("gray", windows=2)

    def test_5_rxe_counters_rise_with_probes_and_reach_the_analyzer(self):
        # Exported by the agent: rxe's hw_counters sent_pkts and rcvd_pkts, per device.
        name = "hostmesh_agent_infiniband_port_packets_transmitted_total"
        first = samples(agent_metrics(), name)
        time.sleep(12)  # a telemetry period (10 s)
        second = samples(agent_metrics(), name)
        e2e.log(f"rxe sent_pkts: {first} -> {second}")
        self.assertEqual(len(second), 3, second)
        for labels, value in second.items():
            self.assertIn("device=\"rxe", labels)
            # 20 probes/s to each of 2 peers: far more than 100 in 12 s.
            self.assertGreater(value - first.get(labels, 0), 100, labels)
        text = agent_metrics()
        # rxe has no completion timestamps: reported as software (user) stamps.
        sources = samples(text, "hostmesh_agent_timestamp_source")
        self.assertEqual(sorted(sources), [f'{{nic="nic{i}",source="user"}}' for i in range(3)],
                         sources)
        # The receive queues, sized for the rate, never ran dry.
        empty = samples(text, "hostmesh_agent_receive_queue_empty_total")
        self.assertEqual(len(empty), 3, empty)
        self.assertEqual(sum(empty.values()), 0, empty)
        rotation = samples(text, "hostmesh_agent_source_port_rotation")
        per_qp = sorted(k for k, v in rotation.items() if v == 1)
        self.assertEqual(len(per_qp), 3, rotation)
        self.assertTrue(all("mode=\"per_qp\"" in k for k in per_qp), per_qp)
        # Uploaded as deltas: the analyzer's telemetry API has them per NIC.
        tel = e2e.api("telemetry?agent=" + HOST) or {}
        got = {n["nic"]: n["counters"] for n in tel.get("nics", [])}
        e2e.log(f"analyzer telemetry counters of {HOST}: {got}")
        self.assertEqual(len(got), 3, tel)
        for nic, counters in got.items():
            self.assertGreater(counters.get("port_xmit_packets", 0), 100, (nic, counters))
            self.assertGreater(counters.get("port_rcv_packets", 0), 100, (nic, counters))

    def test_6_nic_link_down_pauses_its_probing_and_it_resumes(self):
        failed_before = samples(analyzer_metrics(), "hostmesh_analyzer_results_total")
        rxevm("exec", HOST, "ip link set nic1 down")
        t_down = time.time()
        deadline = t_down + 30
        while "async event port error" not in self.agent_log() and time.time() < deadline:
            time.sleep(1)
        # While down the gauge stays, at 0 (a port state that never loses its
        # series), from the agent's next metric publish on: waited for, not
        # timed (a guest under TCG runs its loop when it gets the CPU).
        want = {'{nic="nic0"}': 1, '{nic="nic1"}': 0, '{nic="nic2"}': 1}
        deadline = time.time() + 10
        while True:
            port_up = samples(agent_metrics(), "hostmesh_agent_rdma_port_up")
            if port_up == want or time.time() > deadline:
                break
            time.sleep(0.2)
        e2e.log(f"rdma_port_up while nic1 is down: {port_up}")
        self.assertEqual(port_up, want)
        time.sleep(max(0.0, t_down + 12 - time.time()))  # a window's worth of paused probing
        rxevm("exec", HOST, "ip link set nic1 up; sh /run/nic1.routes")
        self.assertRegex(self.agent_log(), r"nic1: async event port error: probing from it pauses")
        # Its probes were send failures, which the analyzer keeps out of the loss figures.
        failed_after = samples(analyzer_metrics(), "hostmesh_analyzer_results_total")
        key = '{outcome="send_failed"}'
        e2e.log(f"analyzer send failures: {failed_before.get(key)} -> {failed_after.get(key)}")
        self.assertGreater(failed_after.get(key, 0) - failed_before.get(key, 0), 50)
        # The agent hears the port come back (event, or its own query while down).
        deadline = time.time() + 30
        while time.time() < deadline:
            events = samples(agent_metrics(), "hostmesh_agent_rdma_async_events_total")
            if events.get('{nic="nic1",event="port_active"}', 0) >= 1:
                break
            time.sleep(1)
        e2e.log(f"async events: { {k: v for k, v in events.items() if v} }; agent log: "
                + " | ".join(line[line.find("nic nic1:"):] for line in self.agent_log().splitlines()
                             if "nic nic1: async" in line or "nic nic1: port" in line))
        self.assertGreaterEqual(events.get('{nic="nic1",event="port_down"}', 0), 1, events)
        self.assertGreaterEqual(events.get('{nic="nic1",event="port_active"}', 0), 1, events)
        # Probing from and to nic1 resumes: every pair with nic1 receives again.
        received = "hostmesh_agent_probes_received_total"
        pairs = [f'{{src_nic="{a}",dst_nic="{b}"}}' for a, b in
                 (("nic1", "nic0"), ("nic1", "nic2"), ("nic0", "nic1"), ("nic2", "nic1"))]
        before = samples(agent_metrics(), received)
        time.sleep(5)
        after = samples(agent_metrics(), received)
        rose = {p: after.get(p, 0) - before.get(p, 0) for p in pairs}
        e2e.log(f"probes received in 5 s after the link came back: {rose}")
        for pair, n in rose.items():
            self.assertGreater(n, 20, f"{pair}: probing did not resume ({rose})")
        # rxe counted the link going down, and the analyzer received it.
        deadline = time.time() + 30
        while True:
            tel = e2e.api(f"telemetry?agent={HOST}&from={int(t_down) - 5}") or {}
            downs = {n["nic"]: n["counters"].get("link_downed", 0) for n in tel.get("nics", [])}
            if downs.get("nic1", 0) >= 1 or time.time() > deadline:
                break
            time.sleep(2)
        e2e.log(f"link_downed deltas since the bounce: {downs}")
        self.assertGreaterEqual(downs.get("nic1", 0), 1, tel)
        self.assertEqual(downs.get("nic0", 0) + downs.get("nic2", 0), 0, tel)

    def test_7_qp_forced_into_error_recovers(self):
        recoveries = "hostmesh_agent_qp_recoveries_total"
        ok = '{nic="nic2",outcome="ok"}'
        before = samples(agent_metrics(), recoveries)
        e2e.log("debug hook: " + debug_hook("/debug/qp-error?nic=nic2").strip())
        deadline = time.time() + 20
        while time.time() < deadline:
            after = samples(agent_metrics(), recoveries)
            if after.get(ok, 0) > before.get(ok, 0):
                break
            time.sleep(0.5)
        log = [line[line.find("nic nic2:"):] for line in self.agent_log().splitlines()
               if "nic nic2: QP" in line]
        e2e.log(f"QP recoveries: {before} -> {after}; agent log: {' | '.join(log)}")
        self.assertGreaterEqual(after.get(ok, 0) - before.get(ok, 0), 1, after)
        self.assertTrue(any("forced into the error state" in line for line in log), log)
        self.assertTrue(any("found in state ERR" in line for line in log), log)
        self.assertTrue(any("reset and back in RTS" in line for line in log), log)
        # Probing to nic2 (its receive QP) resumes.
        received = "hostmesh_agent_probes_received_total"
        pairs = ['{src_nic="nic0",dst_nic="nic2"}', '{src_nic="nic1",dst_nic="nic2"}']
        first = samples(agent_metrics(), received)
        time.sleep(5)
        second = samples(agent_metrics(), received)
        rose = {p: second.get(p, 0) - first.get(p, 0) for p in pairs}
        e2e.log(f"probes received by nic2 in 5 s after the reset: {rose}")
        for pair, n in rose.items():
            self.assertGreater(n, 20, f"{pair}: probing did not resume ({rose})")

    def test_8_device_error_reopens_the_nic(self):
        # rxe cannot raise DEVICE_FATAL while a process holds it (deleting the
        # link waits for the agent), so the hook takes nic0's device as failed;
        # the close, reopen, new QPs and their new source ports are real.
        reopens = "hostmesh_agent_rdma_reopens_total"
        before = samples(agent_metrics(), reopens)
        e2e.log("debug hook: " + debug_hook("/debug/device-error?nic=nic0").strip())
        deadline = time.time() + 20
        while time.time() < deadline:
            after = samples(agent_metrics(), reopens)
            if after.get('{nic="nic0"}', 0) > before.get('{nic="nic0"}', 0):
                break
            time.sleep(0.5)
        log = [line[line.find("nic"):] for line in self.agent_log().splitlines()
               if "reopen" in line and "nic0" in line]
        e2e.log(f"reopens: {before} -> {after}; agent log: {' | '.join(log)}")
        self.assertEqual(after.get('{nic="nic0"}', 0) - before.get('{nic="nic0"}', 0), 1, after)
        self.assertTrue(any("rxe0 reopened after a device or CQ error" in line for line in log), log)
        self.assertTrue(any("new source ports" in line for line in log), log)
        # Probing from and to nic0 resumes, from its new QPs' ports.
        received = "hostmesh_agent_probes_received_total"
        pairs = [f'{{src_nic="{a}",dst_nic="{b}"}}' for a, b in
                 (("nic0", "nic1"), ("nic0", "nic2"), ("nic1", "nic0"), ("nic2", "nic0"))]
        time.sleep(1)
        first = samples(agent_metrics(), received)
        time.sleep(5)
        second = samples(agent_metrics(), received)
        rose = {p: second.get(p, 0) - first.get(p, 0) for p in pairs}
        e2e.log(f"probes received in 5 s after nic0 reopened: {rose}")
        for pair, n in rose.items():
            self.assertGreater(n, 20, f"{pair}: probing did not resume ({rose})")
        self.assertEqual(samples(agent_metrics(), "hostmesh_agent_rdma_port_up").get(
            '{nic="nic0"}'), 1)


if __name__ == "__main__":
    # tcpdump reads the wire (scripts/install-rxe-deps.sh installs it with QEMU).
    why = vm.requirements() or (None if shutil.which("tcpdump") else "tcpdump not installed")
    if why:
        print(f"skipped: {why}")
        sys.exit(77)
    e2e.main()
