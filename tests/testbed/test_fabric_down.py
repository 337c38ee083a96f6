"""`fabric down` leaves nothing behind: after a normal up, after a crash halfway
through up (namespaces but no state, a process still inside), and when nothing
is there at all. Needs root."""

import json
import os
import subprocess
import unittest

import harness
from hmfabric import netns, state

STATE_FILE = os.path.join(state.state_dir(harness.PREFIX), "fabric.json")


def ours():
    return [ns for ns in netns.list_namespaces() if ns.startswith(harness.PREFIX)]


class Down(unittest.TestCase):
    def tearDown(self):
        harness.fabric("down")
        for ns in ours():  # the bystanders of the crash test
            subprocess.run(["ip", "netns", "del", ns], check=False)

    def test_nothing_up(self):
        out = harness.fabric("down")
        self.assertIn("nothing", out.stdout)
        self.assertEqual(harness.fabric("status", check=False).returncode, 3)

    def test_up_then_down(self):
        fab = harness.Fabric(2, 2, 2).up()
        with open(STATE_FILE) as f:
            self.assertEqual(json.load(f), {"hosts": 2, "rails": 2, "spines": 2, "pods": 1,
                                            "hash_seed": 1, "icmp_unlimited": False})
        self.assertEqual(sorted(ours()), sorted(fab.layout.namespaces))
        self.assertIn("removed 7 namespaces", harness.fabric("down").stdout)
        self.assertEqual(ours(), [])
        self.assertFalse(os.path.exists(state.state_dir(harness.PREFIX)))
        self.assertIn("nothing", harness.fabric("down").stdout)  # idempotent

    def test_crash_halfway_through_up(self):
        p = harness.PREFIX
        fabric_ns = [p + "h000", p + "p0r1", p + "s00", p + "mgmt"]
        bystanders = [p + "probe", p + "x-h000"]  # not names of this fabric's devices
        for ns in fabric_ns + bystanders:
            subprocess.run(["ip", "netns", "add", ns], check=True)
        sleeper = subprocess.Popen(["ip", "netns", "exec", p + "h000", "sleep", "60"])
        try:
            status = harness.fabric("status", check=False)
            self.assertEqual(status.returncode, 1)
            self.assertIn("broken", status.stdout)
            refused = harness.fabric("up", "--hosts", "2", "--rails", "2", "--spines", "2",
                                     check=False)
            self.assertIn("run `fabric down` first", refused.stderr)
            self.assertIn("removed 4 namespaces", harness.fabric("down").stdout)
            self.assertEqual(sleeper.wait(timeout=5), -15)  # SIGTERM from down
        finally:
            sleeper.kill()
        self.assertEqual(sorted(ours()), sorted(bystanders))

    def test_state_without_namespaces(self):
        harness.Fabric(2, 2, 2).up()
        subprocess.run(["ip", "netns", "del", harness.PREFIX + "s01"], check=True)
        self.assertIn("6/7 namespaces", harness.fabric("status", check=False).stdout)
        harness.fabric("down")
        self.assertEqual(ours(), [])
        self.assertFalse(os.path.exists(STATE_FILE))

    def test_bad_size_builds_nothing(self):
        bad = harness.fabric("up", "--hosts", "3", "--rails", "2", "--spines", "2", "--pods",
                             "2", check=False)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("multiple of --pods", bad.stderr)
        self.assertEqual(ours(), [])


if __name__ == "__main__":
    harness.main()
