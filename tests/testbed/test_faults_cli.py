"""`fabric fault` as a command: input validation with clear errors, `list` as
exact ground truth of what is injected, `clear` of one and of all restoring the
fabric exactly, conflicting faults refused, and `fabric down` stopping every
process faults started. Needs root; exits 77 (skipped) otherwise.
"""

import datetime
import json
import os
import subprocess
import sys
import time
import unittest

import harness
from hmfabric import cpu_cgroup, fault_ops, faults, netns
from hmfabric import fault_probe as fp


def fault(*args: str, **kw) -> str:
    return harness.fabric("fault", *args, **kw).stdout.strip()


def owned_processes(prefix: str) -> list[int]:
    """Processes started by a fault of the fabric `prefix` (by their owner tag)."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit()
            and (owner := fault_ops.owner_of(int(p))) and owner.startswith(prefix + "/")
            and not _zombie(int(p))]


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True  # gone


class Validation(unittest.TestCase):
    """Bad input fails with a message naming what was wrong, and changes nothing."""

    @classmethod
    def setUpClass(cls):
        cls.fab = harness.Fabric(hosts=2, rails=2, spines=2).up()
        cls.clean = fp.fabric_state(cls.fab.layout.namespaces)

    @classmethod
    def tearDownClass(cls):
        cls.fab.down()

    def tearDown(self):
        self.assertEqual(json.loads(fault("list")), [])
        self.assertEqual(fp.fabric_state(self.fab.layout.namespaces), self.clean)

    def assertFails(self, args, *words, env=None, code=None):
        proc = harness.fabric("fault", *args, check=False) if env is None else _fabric_env(
            env, "fault", *args)
        self.assertNotEqual(proc.returncode, 0, proc.stdout)
        if code is not None:
            self.assertEqual(proc.returncode, code, proc.stderr)
        for word in words:
            self.assertIn(word, proc.stderr)

    def test_unknown_link(self):
        self.assertFails(["add", "loss", "--link", "p0r0-s07", "--percent", "5"],
                         "no link named 'p0r0-s07'", code=1)

    def test_unknown_switch(self):
        self.assertFails(["add", "switch-loss", "--switch", "h000", "--percent", "3"],
                         "--switch 'h000': the switches are p0r0, p0r1, s00, s01", code=1)

    def test_percent_out_of_range(self):
        for bad in ("0", "101", "-3", "lots"):
            self.assertFails(["add", "loss", "--link", "p0r0-s00", "--percent", bad], "--percent",
                             code=2)

    def test_from_must_be_an_end_of_the_link(self):
        self.assertFails(["add", "gray", "--link", "p0r0-s00", "--from", "s01"],
                         "'s01' is not an end of link p0r0-s00")

    def test_unknown_host_and_nic(self):
        self.assertFails(["add", "nic-down", "--host", "h007", "--nic", "nic0"],
                         "no host named 'h007'")
        self.assertFails(["add", "nic-down", "--host", "h001", "--nic", "nic2"],
                         "h001 has nic0..nic1")
        self.assertFails(["add", "cpu", "--host", "s00"], "no host named 's00'")

    def test_bad_numbers(self):
        self.assertFails(["add", "congestion", "--link", "p0r0-s00", "--rate", "fast"],
                         "use a bit rate like")
        self.assertFails(["add", "congestion", "--link", "p0r0-s00", "--rate", "10gbit"],
                         "outside 64kbit..200mbit")
        self.assertFails(["add", "delay", "--link", "p0r0-s00", "--ms", "0"], "--ms must be in")
        self.assertFails(["add", "blackhole", "--link", "p0r0-s00", "--sport", "70000"],
                         "--sport must be in")
        self.assertFails(["add", "nic-flap", "--host", "h000", "--nic", "nic0", "--period",
                          "0.001"], "--period must be in")

    def test_unknown_fault_id(self):
        self.assertFails(["clear", "f99"], "no fault 'f99' (injected: none)")

    def test_delayq_not_built(self):
        self.assertFails(["add", "delay", "--link", "p0r0-s00", "--ms", "2"],
                         "hostmesh-delayq is not built", "HOSTMESH_BUILD_DIR",
                         env={"HOSTMESH_BUILD_DIR": "/nonexistent"})

    def test_fabric_not_up(self):
        self.assertFails(["add", "loss", "--link", "p0r0-s00", "--percent", "5"],
                         "no fabric with prefix", "fabric up",
                         env={"HOSTMESH_FABRIC_PREFIX": harness.PREFIX + "none-"})

    def test_conflicting_faults_are_refused(self):
        fid = fault("add", "nic-down", "--host", "h000", "--nic", "nic0")
        self.assertFails(["add", "link-down", "--link", "h000.nic0-p0r0"],
                         f"fault {fid} (nic-down) already holds the link state of nic0")
        self.assertEqual([f["id"] for f in json.loads(fault("list"))], [fid])
        fault("clear")


class GroundTruth(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fab = harness.Fabric(hosts=2, rails=4, spines=2).up()
        cls.clean = fp.fabric_state(cls.fab.layout.namespaces)

    @classmethod
    def tearDownClass(cls):
        cls.fab.down()

    def test_list_is_exactly_what_is_injected_and_clear_restores(self):
        t0 = time.time()
        a = fault("add", "loss", "--link", "h001.nic2-p0r2", "--percent", "12.5", "--from", "h001")
        b = fault("add", "link-down", "--link", "p0r3-s01")
        c = fault("add", "congestion", "--link", "p0r1-s00", "--rate", "2mbit")
        d = fault("add", "nic-flap", "--host", "h000", "--nic", "nic3", "--period", "0.5")
        t1 = time.time()
        listed = {f["id"]: f for f in json.loads(fault("list"))}
        self.assertEqual(list(listed), [a, b, c, d])
        self.assertEqual([listed[i]["kind"] for i in listed],
                         ["loss", "link-down", "congestion", "nic-flap"])
        for entry in listed.values():
            self.assertTrue(t0 <= entry["started_unix"] <= t1)
            iso = datetime.datetime.fromisoformat(entry["started_iso"].replace("Z", "+00:00"))
            self.assertAlmostEqual(iso.timestamp(), entry["started_unix"], delta=0.001)

        loss = listed[a]
        self.assertEqual(loss["params"], {"link": "h001.nic2-p0r2", "percent": 12.5,
                                          "from": "h001"})
        self.assertEqual(loss["targets"], [{
            "role": "egress", "device": "h001", "namespace": self.fab.ns("h001"),
            "ifname": "nic2", "ip": self.fab.nic_ip(1, 2), "link": "h001.nic2-p0r2"}])
        # The host's sends are dropped on the wire (the rail switch's
        # prerouting), not in the host, where the sender would see EPERM.
        self.assertEqual(loss["namespaces"], [self.fab.ns("h001"), self.fab.ns("p0r2")])

        down = listed[b]
        self.assertEqual({(t["device"], t["ifname"]) for t in down["targets"]},
                         {("p0r3", "s01"), ("s01", "p0r3")})
        self.assertEqual(down["links"], ["p0r3-s01"])

        congestion = listed[c]
        self.assertEqual(congestion["params"]["rate_bps"], 2_000_000)
        self.assertEqual(len(congestion["processes"]), 2)  # one generator per direction
        self.assertTrue(all(p["alive"] for p in congestion["processes"]))
        # The far end of each direction drops the filler: both namespaces touched.
        self.assertEqual(congestion["namespaces"], [self.fab.ns("p0r1"), self.fab.ns("s00")])

        flap = listed[d]
        self.assertEqual(flap["targets"][0]["link"], "h000.nic3-p0r3")
        self.assertEqual(flap["params"]["period"], 0.5)

        self.assertEqual(fault("clear", b), b)
        self.assertEqual([f["id"] for f in json.loads(fault("list"))], [a, c, d])
        self.assertIn("UP", netns.ip_json(self.fab.ns("s01"), "link", "show", "dev",
                                                    "p0r3")[0]["flags"])
        self.assertEqual(fault("clear").split(), [d, c, a])
        self.assertEqual(json.loads(fault("list")), [])
        self.assertEqual(owned_processes(harness.PREFIX), [])
        self.assertEqual(fp.fabric_state(self.fab.layout.namespaces), self.clean)

    def test_ids_are_not_reused(self):
        first = fault("add", "gray", "--link", "p0r0-s00")
        fault("clear")
        second = fault("add", "gray", "--link", "p0r0-s00")
        fault("clear")
        self.assertNotEqual(first, second)


class Teardown(unittest.TestCase):
    def test_down_stops_every_fault_process(self):
        prefix = harness.PREFIX + "td-"
        run = lambda *a: _fabric_env({"HOSTMESH_FABRIC_PREFIX": prefix}, *a)  # noqa: E731
        self.assertEqual(run("up", "--hosts", "2", "--rails", "2", "--spines", "2").returncode, 0)
        try:
            kinds = [("nic-flap", "--host", "h000", "--nic", "nic0", "--period", "0.2"),
                     ("congestion", "--link", "p0r0-s00", "--rate", "1mbit"),
                     ("cpu", "--host", "h001", "--workers", "1", "--load", "20")]
            if _delayq_built():
                kinds.append(("delay", "--link", "p0r1-s01", "--ms", "3"))
            for kind in kinds:
                proc = run("fault", "add", *kind)
                self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertGreaterEqual(len(owned_processes(prefix)), len(kinds))
            self.assertEqual(len(_cgroups(prefix)), 1)  # the cpu fault's
        finally:
            down = run("down")
        self.assertEqual(down.returncode, 0, down.stderr)
        self.assertEqual(owned_processes(prefix), [])
        self.assertEqual(_cgroups(prefix), [])
        self.assertFalse(os.path.exists(f"/run/hostmesh-fabric/{prefix}"))
        faults.teardown(prefix)  # nothing to tear down is fine too


def _fabric_env(env: dict, *args: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "HOSTMESH_FABRIC_PREFIX": harness.PREFIX, **env}
    return subprocess.run([sys.executable, harness.FABRIC, *args], env=full,
                          capture_output=True, text=True, check=False)


def _cgroups(prefix: str) -> list[str]:
    _, mount = cpu_cgroup.hierarchy()
    return [e for e in os.listdir(mount) if e.startswith(cpu_cgroup.NAME_PREFIX + prefix)]


def _delayq_built() -> bool:
    build = os.environ.get(faults.BUILD_DIR_ENV) or os.path.join(faults.REPO_DIR, "build")
    return os.access(os.path.join(build, faults.DELAYQ), os.X_OK)


if __name__ == "__main__":
    harness.main()
