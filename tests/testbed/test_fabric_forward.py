"""`fabric forward` relays 127.0.0.1 of the root namespace to a port in the
management namespace (where the analyzer's HTTP API lives), and stops."""

import os
import socket
import subprocess
import sys
import time
import unittest
import urllib.request

import harness
from hmfabric import layout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str, deadline_s: float = 30.0) -> str:
    """GET with retries until the server in the namespace is listening (it may
    take a while to start on a busy machine; the deadline only bounds a failure)."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                return resp.read().decode()
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)


class ForwardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fab = harness.Fabric(hosts=2, rails=2, spines=2).up()
        cls.docroot = os.path.join("/tmp", f"hmfwd{os.getpid()}")
        os.makedirs(cls.docroot, exist_ok=True)
        with open(os.path.join(cls.docroot, "probe.txt"), "w") as f:
            f.write("hello from mgmt\n")
        cls.server = subprocess.Popen(
            ["ip", "netns", "exec", cls.fab.ns(layout.MGMT_DEVICE), sys.executable, "-m",
             "http.server", "18080", "--bind", layout.ANALYZER_IP, "--directory", cls.docroot],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait()
        cls.fab.down()

    def test_relays_and_stops(self):
        local = free_port()
        out = harness.fabric("forward", "--port", "18080", "--local-port", str(local)).stdout
        self.assertIn(f"127.0.0.1:{local}", out)
        self.assertEqual(fetch(f"http://127.0.0.1:{local}/probe.txt"), "hello from mgmt\n")
        harness.fabric("forward", "--stop")
        with self.assertRaises(OSError):
            fetch(f"http://127.0.0.1:{local}/probe.txt", deadline_s=0)


if __name__ == "__main__":
    harness.main()
