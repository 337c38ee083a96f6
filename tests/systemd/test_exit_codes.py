#!/usr/bin/env python3
"""The daemons' exit codes for broken files, as systemd sees them: every
usage, config or inventory error is 2 (RestartPreventExitStatus=2 in both
units: a broken file stops the unit instead of a restart loop), with a
message naming the file. Runs the built binaries; nothing binds a port or
opens a store (the files are read first). Skips (77) when they are not built."""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ctest_unittest  # noqa: E402

SOURCE_DIR = os.environ.get("HOSTMESH_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_DIR = os.environ.get("HOSTMESH_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
AGENT = os.path.join(BUILD_DIR, "agent", "main", "hostmesh-agent")
ANALYZER = os.path.join(BUILD_DIR, "analyzer", "main", "hostmesh-analyzer")
CONFIG_CAP = 4 << 20  # common/config/yaml_loader.h kMaxConfigFileBytes


class ExitCodes(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hostmesh-exit-")
        self.addCleanup(self.tmp.cleanup)

    def write(self, name: str, text: str) -> str:
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_binary(self, *argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)

    def analyzer_config(self, inventory: str) -> str:
        return self.write("analyzer.yaml",
                          # Plaintext: the inventory is what is tested, not the certificates.
                          f"grpc: {{listen: 127.0.0.1:0, insecure: true}}\n"
                          f"http: {{listen: 127.0.0.1:0}}\n"
                          f"data_dir: {self.tmp.name}/data\ninventory: {inventory}\n")

    def test_a_missing_config_is_2(self):
        for binary in (AGENT, ANALYZER):
            out = self.run_binary(binary, "--config", "/nonexistent/hostmesh.yaml")
            self.assertEqual(out.returncode, 2, out.stderr)
            self.assertIn("/nonexistent/hostmesh.yaml: cannot read the file", out.stderr)

    def test_a_bad_key_is_2(self):
        path = self.write("agent.yaml", "host: h1\nanalyzr: {address: 127.0.0.1:1}\n")
        out = self.run_binary(AGENT, "--config", path)
        self.assertEqual(out.returncode, 2, out.stderr)
        self.assertIn(f"{path}:2:1: analyzr: unknown key", out.stderr)

    def test_a_config_over_the_cap_is_2_before_parsing(self):
        path = self.write("analyzer.yaml", "data_dir: /tmp\n")
        os.truncate(path, CONFIG_CAP + 1)  # sparse
        out = self.run_binary(ANALYZER, "--config", path, "--check-config")
        self.assertEqual(out.returncode, 2, out.stderr)
        self.assertIn(f"the file is {CONFIG_CAP + 1} bytes, over the cap of 4MiB", out.stderr)

    def test_an_inventory_error_is_2_for_check_config_and_the_daemon(self):
        inventory = self.write("inventory.yaml", "version: 1\nswitches: []\nlinks: []\nhosts:\n"
                               "  - {name: h, nics: []}\n  - {name: h, nics: []}\n")
        config = self.analyzer_config(inventory)
        for argv in ((ANALYZER, "--config", config, "--check-config"),
                     (ANALYZER, "--config", config)):
            out = self.run_binary(*argv)
            self.assertEqual(out.returncode, 2, f"{argv}: {out.stderr}")
            self.assertIn(f"{inventory}:6:", out.stderr)
            self.assertIn("hosts[1].name: duplicate device name", out.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "data")),
                         "the store is not opened before the inventory checks")

    def test_check_config_summarises_the_inventory(self):
        inventory = self.write("inventory.yaml",
                               "version: 1\nswitches: []\nlinks: []\nhosts: []\n")
        out = self.run_binary(ANALYZER, "--config", self.analyzer_config(inventory),
                              "--check-config")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn(f"inventory {inventory}: 0 switches, 0 links, 0 hosts", out.stdout)

    def test_usage_errors_are_2(self):
        for binary in (AGENT, ANALYZER):
            self.assertEqual(self.run_binary(binary).returncode, 2)
            self.assertEqual(self.run_binary(binary, "--no-such-flag").returncode, 2)
            self.assertEqual(self.run_binary(binary, "--version").returncode, 0)


if __name__ == "__main__":
    missing = [b for b in (AGENT, ANALYZER) if not os.access(b, os.X_OK)]
    if missing:
        print(f"SKIPPED: not built: {missing}", file=sys.stderr)
        sys.exit(77)
    ctest_unittest.main()
