#!/usr/bin/env python3
"""scripts/check-skips.py, run as scripts/test.sh runs it on CI, on small
JUnit reports shaped like ctest's (--output-junit): an allowed skip passes,
one off the allowlist fails naming the test and its reason, patterns match,
and a missing report or an entry without a reason is an error (exit 2)."""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ctest_unittest  # noqa: E402

SOURCE_DIR = os.environ.get("HOSTMESH_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
CHECK_SKIPS = os.path.join(SOURCE_DIR, "scripts", "check-skips.py")
ALLOWLIST = os.path.join(SOURCE_DIR, "tests", "ci-skip-allowlist.txt")

# As ctest 3.25 writes them: a GoogleTest skip (SKIP_REGULAR_EXPRESSION), a
# Python script's exit 77 (SKIP_RETURN_CODE), a test that ran.
GTEST_SKIP = """\
	<testcase name="{name}" classname="{name}" time="0.01" status="notrun">
		<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
		<system-out>Note: Google Test filter = {case}
[ RUN      ] {case}
/work/main/tests/x_test.cc:65: Skipped
{reason}
[  SKIPPED ] {case} (0 ms)
[  SKIPPED ] 1 test, listed below:
[  SKIPPED ] {case}
</system-out>
	</testcase>
"""
SCRIPT_SKIP = """\
	<testcase name="{name}" classname="{name}" time="0.02" status="notrun">
		<skipped message="SKIP_RETURN_CODE=77"/>
		<system-out>SKIPPED: {reason}
</system-out>
	</testcase>
"""
PASSED = """\
	<testcase name="{name}" classname="{name}" time="0.01" status="run">
		<system-out>[       OK ] fine
</system-out>
	</testcase>
"""
DEVICE_TEST = ("agent_verbs_verbs_transport_test.VerbsTransportDeviceTest."
               "ProbeTravelsBetweenTwoQueuePairsWithFourTimestamps")


class CheckSkips(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="hostmesh-check-skips-")
        self.addCleanup(self.tmp.cleanup)

    def write(self, name: str, text: str) -> str:
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def report(self, *cases: str) -> str:
        return self.write("ctest-junit.xml",
                          '<?xml version="1.0" encoding="UTF-8"?>\n'
                          f'<testsuite name="(empty)" tests="{len(cases)}">\n'
                          + "".join(cases) + "</testsuite>\n")

    def allowlist(self, text: str) -> str:
        return self.write("allowlist.txt", text)

    def check(self, report: str, allowlist: str, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, CHECK_SKIPS, report, "--allowlist", allowlist,
                               *extra], capture_output=True, text=True, timeout=60,
                              check=False)

    def test_allowed_skip_passes_and_is_listed_with_its_reason(self):
        report = self.report(
            GTEST_SKIP.format(name="a_test.Suite.Device", case="Suite.Device",
                              reason="no RDMA device: 0 devices"),
            PASSED.format(name="a_test.Suite.Runs"))
        r = self.check(report, self.allowlist("# comment\n\na_test.Suite.Device  no device on CI\n"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1 of 2 tests skipped", r.stdout)
        self.assertIn("[allowed] a_test.Suite.Device: no RDMA device: 0 devices", r.stdout)

    def test_unlisted_skip_fails_naming_the_test_and_its_reason(self):
        report = self.report(
            GTEST_SKIP.format(name="a_test.Suite.Device", case="Suite.Device", reason="no device"),
            SCRIPT_SKIP.format(name="rdma.test_rxe_fabric", reason="qemu-system-x86_64 not found"))
        r = self.check(report, self.allowlist("a_test.Suite.Device  no device on CI\n"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("[not allowed] rdma.test_rxe_fabric: qemu-system-x86_64 not found", r.stdout)
        self.assertIn("FAILED: 1 test skipped", r.stderr)
        self.assertIn("rdma.test_rxe_fabric: qemu-system-x86_64 not found", r.stderr)
        self.assertNotIn("a_test.Suite.Device", r.stderr)

    def test_report_only_lists_an_unlisted_skip_but_passes(self):
        report = self.report(SCRIPT_SKIP.format(name="e2e.test_nic_down", reason="needs root"))
        r = self.check(report, self.allowlist(""), "--report-only")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("[not allowed] e2e.test_nic_down: needs root", r.stdout)

    def test_pattern_matches(self):
        report = self.report(
            GTEST_SKIP.format(name="b_test.DeviceTest.One", case="DeviceTest.One", reason="x"),
            GTEST_SKIP.format(name="b_test.DeviceTest.Two", case="DeviceTest.Two", reason="x"),
            GTEST_SKIP.format(name="b_test.Other.Three", case="Other.Three", reason="y"))
        allowlist = self.allowlist("b_test.DeviceTest.*\tno device on CI\n")
        r = self.check(report, allowlist)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("b_test.Other.Three: y", r.stderr)
        self.assertNotIn("DeviceTest", r.stderr)
        r = self.check(report, self.allowlist("b_test.DeviceTest.*  no device\nb_test.?ther.*  y\n"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_entry_without_a_reason_is_an_error(self):
        report = self.report(PASSED.format(name="a_test.Suite.Runs"))
        r = self.check(report, self.allowlist("a_test.Suite.Ok  fine\n\na_test.Suite.Device\n"))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(":3: 'a_test.Suite.Device' has no reason", r.stderr)

    def test_missing_or_broken_report_is_an_error(self):
        allowlist = self.allowlist("")
        r = self.check(os.path.join(self.tmp.name, "absent.xml"), allowlist)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("cannot read the JUnit report", r.stderr)
        r = self.check(self.write("broken.xml", "<testsuite><testcase"), allowlist)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("is not XML", r.stderr)

    def test_shipped_allowlist_reads_and_allows_the_verbs_device_tests(self):
        report = self.report(GTEST_SKIP.format(name=DEVICE_TEST, case="VerbsTransportDeviceTest.x",
                                               reason="no RDMA device"))
        r = self.check(report, ALLOWLIST)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(f"[allowed] {DEVICE_TEST}", r.stdout)


if __name__ == "__main__":
    ctest_unittest.main()
