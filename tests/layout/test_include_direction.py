#!/usr/bin/env python3
"""The floors and rooms of the source tree (docs/architecture.md): a file may
include only from its own top-level folder and the floors below it, and the
`main/` rooms of the agent and the analyzer hold their processes, which no
other room includes. Reads the tree as text; needs nothing built.

A new include that breaks the rule fails here with the file, the line and
the rule. The few that broke it before the rule was written are listed in
KNOWN with what is to become of them (issue 26); one that is gone must leave
the list too, so the list only shrinks.
"""

from __future__ import annotations

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ctest_unittest  # noqa: E402

SOURCE_DIR = os.environ.get("HOSTMESH_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))

# What each top-level folder may include besides itself. `hostmesh/` is the
# protobuf code generated from proto/. tests/ may include anything.
MAY_INCLUDE = {
    "common": set(),
    "proto": {"common"},
    "topology": {"common"},
    "tracer": {"common"},
    "agent": {"common", "proto", "tracer"},
    "analyzer": {"common", "proto", "topology"},
    "ctl": {"common", "proto", "topology", "tracer"},
    "sim": {"common", "proto", "topology", "tracer", "agent", "analyzer"},
    "bench": {"common", "proto", "topology", "tracer", "agent", "analyzer"},
    # ctl too: hostmeshctl decodes what an analyzer answers.
    "fuzz": {"common", "proto", "topology", "tracer", "agent", "analyzer", "ctl"},
    "deploy": {"common"},
}
# Rooms that hold a process: only the room itself and its tests include them.
PROCESS_ROOMS = ("agent/main/", "analyzer/main/")

# (including file, included file): includes that break the rule and are
# known, each to be moved out. Empty since the agent's wiring (agent/wiring)
# and the process tuning (analyzer/ingest) left the process rooms; keep it so.
KNOWN: set[tuple[str, str]] = set()

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".h", ".hpp", ".cc", ".cpp")


def room_of(included: str) -> str | None:
    top = included.split("/", 1)[0]
    if top == "hostmesh":
        return "proto"
    return top if top in MAY_INCLUDE or top == "tests" else None


def includes():
    """(file, line number, included path) for every quoted include."""
    for top in MAY_INCLUDE:
        for folder, _, files in os.walk(os.path.join(SOURCE_DIR, top)):
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, SOURCE_DIR)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m:
                            yield rel, number, m.group(1)


def breaks(rel: str, included: str) -> str | None:
    """Why including `included` from `rel` breaks the layout, or None."""
    top = rel.split("/", 1)[0]
    room = room_of(included)
    if room is None:
        return None  # a header beside the file, or a system one in quotes
    if room == "tests":
        return f"{top}/ includes test code"
    if room != top and room not in MAY_INCLUDE[top]:
        return f"{top}/ may include only {sorted(MAY_INCLUDE[top]) or 'itself'}, not {room}/"
    for process in PROCESS_ROOMS:
        if included.startswith(process) and not rel.startswith(process):
            return f"{process} holds a process; its library code belongs in a room of its own"
    return None


class IncludeDirection(unittest.TestCase):
    def test_no_room_includes_a_higher_one(self):
        found = set()
        wrong = []
        for rel, number, included in includes():
            why = breaks(rel, included)
            if why is None:
                continue
            if (rel, included) in KNOWN:
                found.add((rel, included))
                continue
            wrong.append(f"{rel}:{number}: #include \"{included}\": {why}")
        self.assertEqual(wrong, [], "\n" + "\n".join(wrong))
        stale = sorted(KNOWN - found)
        self.assertEqual(stale, [], "gone from the tree: take them off KNOWN")

    def test_the_rule_catches_what_it_should(self):
        self.assertIsNotNone(breaks("tracer/x.cc", "agent/verbs/flow_label.h"))
        self.assertIsNotNone(breaks("common/x.h", "topology/ipv4.h"))
        self.assertIsNotNone(breaks("agent/x.cc", "analyzer/store/store.h"))
        self.assertIsNotNone(breaks("analyzer/x.cc", "agent/core/probe_types.h"))
        self.assertIsNotNone(breaks("sim/x.cc", "agent/main/agent_app.h"))
        self.assertIsNotNone(breaks("agent/core/x.cc", "tests/support/fake_transport.h"))
        self.assertIsNone(breaks("agent/main/x.cc", "agent/main/wiring.h"))
        self.assertIsNone(breaks("sim/x.cc", "agent/core/tracker.h"))
        self.assertIsNone(breaks("agent/x.cc", "hostmesh/v1/ingest.pb.h"))
        self.assertIsNone(breaks("analyzer/x.cc", "common/net/roce.h"))


if __name__ == "__main__":
    ctest_unittest.main()
