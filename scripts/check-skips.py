#!/usr/bin/env python3
"""Lists the ctest tests that did not run, with each one's skip reason, from
ctest's JUnit report (ctest --output-junit FILE); exits 1 when one of them is
not on tests/ci-skip-allowlist.txt.

Why (issue 28, "a green CI that means it works"): ctest counts a skipped test
as not failed, so a CI host that lacks root, a tool or a device would pass
without running what the tests claim to check. scripts/test.sh runs this
after ctest; with CI=true a skip outside the allowlist fails the run, on a
developer's machine (--report-only) the list is only printed.

A skip is a testcase with status "notrun" (SKIP_RETURN_CODE 77,
SKIP_REGULAR_EXPRESSION "[  SKIPPED ]", or a test ctest could not start) or
"disabled". Its reason comes from the test's output: GoogleTest's
"<file>:<line>: Skipped" message, the Python scripts' "skipped: ..." or
"SKIPPED: ..." lines; else ctest's own word (e.g. SKIP_RETURN_CODE=77).

Allowlist: one entry a line, a ctest test name or an fnmatch pattern, then
whitespace and the reason (required); lines starting with # are comments.

Exit status: 0 when every skip is allowed (or with --report-only), 1 when a
skip is not, 2 when the report or the allowlist cannot be read or an
allowlist entry has no reason.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import re
import sys
import xml.etree.ElementTree as ET
from typing import NamedTuple

DEFAULT_ALLOWLIST = os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ci-skip-allowlist.txt"))
GTEST_SKIPPED = re.compile(r":\d+: Skipped$")        # GTEST_SKIP()'s first line
GTEST_SKIPPED_END = "[  SKIPPED ]"
SCRIPT_SKIPPED = re.compile(r"^skipped: (.+)$", re.IGNORECASE)  # tests/support/ctest_unittest.py
MAX_REASON = 400


class Error(Exception):
    """The report or the allowlist cannot be used (exit 2)."""


class Skip(NamedTuple):
    name: str
    reason: str


class Entry(NamedTuple):
    pattern: str
    reason: str


def read_allowlist(path: str) -> list[Entry]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise Error(f"cannot read the allowlist {path}: {e}") from e
    entries, missing = [], []
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        parts = text.split(None, 1)
        if len(parts) < 2 or parts[1].startswith("#"):
            missing.append(f"{path}:{number}: '{parts[0]}' has no reason")
            continue
        entries.append(Entry(parts[0], parts[1].strip()))
    if missing:
        raise Error("\n".join(missing) + "\n(an entry is the test name or pattern, whitespace, "
                    "then why it may skip on CI)")
    return entries


def skip_reason(output: str) -> str:
    """The skip messages in a test's output, joined; "" when there is none."""
    reasons = []
    lines = output.splitlines()
    i = 0
    while i < len(lines):
        if GTEST_SKIPPED.search(lines[i]):
            message = []
            i += 1
            while i < len(lines) and not lines[i].startswith(GTEST_SKIPPED_END):
                if lines[i].strip():
                    message.append(lines[i].strip())
                i += 1
            reasons.append(" ".join(message) or "GTEST_SKIP() without a message")
            continue
        match = SCRIPT_SKIPPED.match(lines[i])
        if match:
            reasons.append(match.group(1).strip())
        i += 1
    reason = "; ".join(reasons)
    return reason if len(reason) <= MAX_REASON else reason[:MAX_REASON] + "..."


def read_report(path: str) -> tuple[list[Skip], int]:
    """The skipped tests in ctest's JUnit report, and how many tests it has."""
    try:
        root = ET.parse(path).getroot()
    except OSError as e:
        raise Error(f"cannot read the JUnit report {path}: {e.strerror} "
                    "(did ctest run with --output-junit?)") from e
    except ET.ParseError as e:
        raise Error(f"the JUnit report {path} is not XML: {e}") from e
    if root.tag not in ("testsuite", "testsuites"):
        raise Error(f"the JUnit report {path} has <{root.tag}> at its root, not <testsuite>")
    skips, total = [], 0
    for case in root.iter("testcase"):
        total += 1
        status = case.get("status", "")
        skipped = case.find("skipped")
        if status not in ("notrun", "disabled") and skipped is None:
            continue
        reason = (skip_reason(case.findtext("system-out") or "")
                  or (skipped.get("message", "") if skipped is not None else "")
                  or status)
        skips.append(Skip(case.get("name", "(unnamed)"), reason))
    return sorted(skips), total


def allowed(name: str, entries: list[Entry]) -> bool:
    return any(fnmatch.fnmatchcase(name, entry.pattern) for entry in entries)


def tests(n: int) -> str:
    return f"{n} test" if n == 1 else f"{n} tests"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("junit", help="ctest's JUnit report (ctest --output-junit FILE)")
    parser.add_argument("--allowlist", default=DEFAULT_ALLOWLIST,
                        help="allowed skips (default: tests/ci-skip-allowlist.txt)")
    parser.add_argument("--report-only", action="store_true",
                        help="print the skips but exit 0 when some are not allowed "
                             "(a developer's machine)")
    args = parser.parse_args()
    try:
        entries = read_allowlist(args.allowlist)
        skips, total = read_report(args.junit)
    except Error as e:
        print(f"check-skips: {e}", file=sys.stderr)
        return 2

    if not skips:
        print(f"check-skips: no test skipped ({total} in the report)")
        return 0
    print(f"check-skips: {len(skips)} of {total} tests skipped:")
    unlisted = [s for s in skips if not allowed(s.name, entries)]
    for s in skips:
        print(f"  [{'not allowed' if s in unlisted else 'allowed'}] {s.name}: {s.reason}")
    if not unlisted:
        return 0
    allowlist = os.path.relpath(args.allowlist)
    if allowlist.startswith(".."):
        allowlist = os.path.abspath(args.allowlist)
    if args.report_only:
        print(f"check-skips: {tests(len(unlisted))} not on {allowlist}; "
              "on CI (CI=true) that fails the run", file=sys.stderr)
        return 0
    print(f"check-skips: FAILED: {tests(len(unlisted))} skipped and not on {allowlist} "
          "(make them run on CI, or add an entry with the reason):", file=sys.stderr)
    for s in unlisted:
        print(f"  {s.name}: {s.reason}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
