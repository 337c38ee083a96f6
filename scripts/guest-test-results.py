#!/usr/bin/env python3
"""Prints what the verbs device tests did in the soft-RoCE guest: the lines
rdma.test_rxe_fabric logged for them ("guest <binary>: ..."), read from
ctest's JUnit report, which keeps a passed test's output too. Silent when the
rdma test did not run; its pass or failure is ctest's to report."""

import re
import sys
import xml.etree.ElementTree as ET

TEST = "rdma.test_rxe_fabric"


def main() -> int:
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} JUNIT", file=sys.stderr)
        return 2
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"guest-test-results: cannot read {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    for case in root.iter("testcase"):
        if case.get("name") != TEST:
            continue
        lines = [m.group(1) for m in re.finditer(r"^\S*\s*\[[\d:]+\] (guest \S+: .*)$",
                                                 case.findtext("system-out") or "", re.M)]
        print(f"{TEST}: the verbs device tests in the soft-RoCE guest "
              f"({len(lines)} lines; none when the VM did not get that far):")
        for line in lines:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
