#!/usr/bin/env python3
"""The size limits of the central paths (issue 26, docs/architecture.md): no
function in agent/, analyzer/ or tracer/ over 80 lines and no source file
there over 700, as scripts/long-functions.py measures them. A function that
grows past the limit fails here with its name and length; split it into
named phases instead of raising the limit."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ctest_unittest  # noqa: E402

SOURCE_DIR = os.environ.get("HOSTMESH_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(SOURCE_DIR, "scripts", "long-functions.py")


def load_script():
    spec = importlib.util.spec_from_file_location("long_functions", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class SizeLimits(unittest.TestCase):
    def test_the_central_paths_are_within_the_limits(self):
        run = subprocess.run([sys.executable, SCRIPT, "--central", "--check"],
                             capture_output=True, text=True, check=False)
        self.assertEqual(run.returncode, 0,
                         "over the limits (split into named phases):\n" + run.stdout + run.stderr)
        self.assertEqual(run.stdout, "")

    def test_the_measure_counts_a_long_function(self):
        body = "\n".join(f"  x += {i};" for i in range(90))
        source = ("namespace n {\nint Short(int x) {\n  return x;\n}\n"
                  f"int Long(int x) {{\n{body}\n  return x;\n}}\n}}  // namespace n\n")
        with tempfile.NamedTemporaryFile("w", suffix=".cc", delete=False) as f:
            f.write(source)
        try:
            found = {name: lines for name, _, lines in load_script().functions(f.name)}
        finally:
            os.unlink(f.name)
        self.assertGreater(found.get("Long", 0), 80, found)
        self.assertLess(found.get("Short", 99), 80, found)


if __name__ == "__main__":
    ctest_unittest.main()
