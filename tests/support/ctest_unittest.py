"""unittest.main for scripts that ctest runs: a skipped case makes the script
exit 77, which ctest (SKIP_RETURN_CODE, cmake/HostmeshTargets.cmake) shows
as skipped, never as passed; a failed one exits 1. Each skip is printed with
its reason, so the log says what did not run and why.
"""

from __future__ import annotations

import sys
import unittest

SKIPPED = 77


def main() -> None:
    result = unittest.main(exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)
    if result.skipped:
        for test, reason in result.skipped:
            print(f"skipped: {test.id()}: {reason}", file=sys.stderr)
        sys.exit(SKIPPED)
    sys.exit(0)
