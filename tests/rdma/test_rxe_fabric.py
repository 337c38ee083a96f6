#!/usr/bin/env python3
"""rdma: one host of the fabric is a soft-RoCE VM (Debian's kernel under QEMU,
rdma_rxe on 3 NICs, each tapped to its rail switch), its agent on
`transport: auto`. Checks, in order on one boot: auto picks verbs and every
NIC rotates its source ports by QP; probes cross the fabric both ways with no
loss; every RoCEv2 source port seen on the wire (tcpdump in a rail switch) is
one the agent offered, and many are used; the analyzer traces those 5-tuples;
5% loss on a link and then a gray (100%) link are localized from the VM's
RoCE probes alone (it is the only host)."""

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
from hmrxe import vm  # noqa: E402

HOST = "h000"
LINK = "p0r0-s00"
# The guest at 50 ms (20 probes/s per NIC) keeps TCG's CPU use moderate and
# gives the faulty link about 20 probes/s.
INTERVAL = "50ms"


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

    def wire_ports(self, seconds: float) -> dict[str, set[int]]:
        """RoCEv2 source ports per NIC address, seen in rail switch p0r0 and p0r1."""
        ports: dict[str, set[int]] = {}
        for sw in ("p0r0", "p0r1"):
            proc = subprocess.run(
                ["timeout", str(seconds), "ip", "netns", "exec", harness.PREFIX + sw, "tcpdump",
                 "-l", "-n", "-i", "any", "-Q", "in", "udp dst port 4791"],
                capture_output=True, text=True)
            for m in re.finditer(r"IP (198\.18\.\d+\.\d+)\.(\d+) > [\d.]+\.4791", proc.stdout):
                ports.setdefault(m.group(1), set()).add(int(m.group(2)))
        return ports

    def test_1_auto_picks_verbs_and_rotates_by_qp(self):
        deadline = time.time() + 60
        while "agent h000 boot" not in self.agent_log() and time.time() < deadline:
            time.sleep(1)
        text = self.agent_log()
        self.assertIn("using verbs for all 3 NICs", text)
        self.assertEqual(len(re.findall(r"source ports by qp \(\d+ send QPs", text)), 3, text)

    def test_2_probes_cross_and_wire_ports_are_the_offered_ones(self):
        snap = self.wait_healthy_window(timeout=240)
        e2e.log(f"healthy window: {snap.describe()}")
        if shutil.which("tcpdump") is None:
            self.skipTest("tcpdump not installed")
        seen = self.wire_ports(6)
        self.assertEqual(sorted(seen), ["198.18.0.1", "198.18.0.3", "198.18.0.5"], seen)
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


if __name__ == "__main__":
    why = vm.requirements()
    if why:
        print(f"skipped: {why}")
        sys.exit(77)
    e2e.main()
