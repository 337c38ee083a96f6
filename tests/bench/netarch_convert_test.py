#!/usr/bin/env python3
"""bench/netarch/to_netarch.py on a hand-made export of 2 hosts x 2 rails x 2
spines and three 10 s windows with flows of every path_kind: netarch's ids, its
topology and per-window trace files (sent, lost, paths, truth), the mapping back
to hostmesh's names, the cut-short policies, errors naming file and line or
field; and score_netarch.py's counts on a netarch output written by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ctest_unittest  # noqa: E402

SOURCE_DIR = os.environ.get("HOSTMESH_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
CONVERTER = os.path.join(SOURCE_DIR, "bench", "netarch", "to_netarch.py")
SCORER = os.path.join(SOURCE_DIR, "bench", "netarch", "score_netarch.py")

# Switches p0r0, p0r1, s00, s01 are netarch nodes 0-3; NICs h000/nic0,
# h000/nic1, h001/nic0, h001/nic1 are 10000-10003.
TOPOLOGY = """\
version: 1
hosts:
  - name: h000
    nics:
      - {name: nic0, rail: 0, ip: 198.18.0.1, switch: p0r0, switch_interface: h000}
      - {name: nic1, rail: 1, ip: 198.18.0.5, switch: p0r1, switch_interface: h000}
  - name: h001
    nics:
      - {name: nic0, rail: 0, ip: 198.18.0.3, switch: p0r0, switch_interface: h001}
      - {name: nic1, rail: 1, ip: 198.18.0.7, switch: p0r1, switch_interface: h001}
switches:
  - {name: p0r0, tier: rail, rail: 0}
  - {name: p0r1, tier: rail, rail: 1}
  - {name: s00, tier: spine}
  - {name: s01, tier: spine}
links:
"""
LINKS = [("h000.nic0-p0r0", "h000", "nic0", "p0r0", "h000"),
         ("h001.nic0-p0r0", "h001", "nic0", "p0r0", "h001"),
         ("h000.nic1-p0r1", "h000", "nic1", "p0r1", "h000"),
         ("h001.nic1-p0r1", "h001", "nic1", "p0r1", "h001"),
         ("p0r0-s00", "p0r0", "s00", "s00", "p0r0"), ("p0r0-s01", "p0r0", "s01", "s01", "p0r0"),
         ("p0r1-s00", "p0r1", "s00", "s00", "p0r1"), ("p0r1-s01", "p0r1", "s01", "s01", "p0r1")]

FAULTS = [
    {"fault": "link_loss p0r0-s01 20% 5s-30s", "kind": "link_loss", "start_s": 5.0,
     "end_s": 30.0, "culprits": ["loss link p0r0-s01"]},
    {"fault": "rnic_loss h001/nic1 2% 0s-14s", "kind": "rnic_loss", "start_s": 0.0,
     "end_s": 14.0, "culprits": ["loss rnic h001/nic1"]},
    {"fault": "switch_loss s00 3% 24s-30s", "kind": "switch_loss", "start_s": 24.0,
     "end_s": 30.0, "culprits": ["loss switch s00"]},
    {"fault": "agent_restart h000 12s-13s", "kind": "agent_restart", "start_s": 12.0,
     "end_s": 13.0, "culprits": []},
]

S01 = ["h000.nic0-p0r0", "p0r0-s01", "p0r1-s01", "h001.nic1-p0r1"]
CANDIDATES = [{"position": 1, "links": ["p0r0-s00", "p0r0-s01"]},
              {"position": 2, "links": ["p0r1-s00", "p0r1-s01"]}]


def flow(window, src, dst, path, kind, sent, lost, port=50000, candidates=None):
    rec = {"window_start_s": window, "src": src, "dst": dst, "src_ip": "x", "dst_ip": "y",
           "src_port": port, "dst_port": 4791, "protocol": 17, "path": path,
           "path_kind": kind, "sent": sent, "lost": lost}
    if candidates:
        rec["candidates"] = candidates
    return rec


FLOWS = [
    # Window 0-10 s: traced, continued, one rail switch only, untraced.
    flow(0.0, "h000/nic0", "h001/nic1", S01, "traced", 5, 2),
    flow(0.0, "h001/nic0", "h000/nic1",
         ["h001.nic0-p0r0", "p0r0-s00", "p0r1-s00", "h000.nic1-p0r1"], "continued", 3, 0),
    flow(0.0, "h000/nic0", "h001/nic0", ["h000.nic0-p0r0", "h001.nic0-p0r0"], "traced", 2, 0),
    flow(0.0, "h000/nic1", "h001/nic0", [], "untraced", 4, 1),
    # Window 10-20 s: cut short with two walks, a null hop without candidates, traced.
    flow(10.0, "h000/nic0", "h001/nic1", ["h000.nic0-p0r0", None, None, "h001.nic1-p0r1"],
         "cut_short", 3, 3, port=50001, candidates=CANDIDATES),
    flow(10.0, "h000/nic0", "h001/nic1", ["h000.nic0-p0r0", None, "p0r1-s00", "h001.nic1-p0r1"],
         "continued", 1, 0),
    flow(10.0, "h001/nic1", "h000/nic0",
         ["h001.nic1-p0r1", "p0r1-s00", "p0r0-s00", "h000.nic0-p0r0"], "traced", 2, 1),
    # Window 20-30 s: cut short whose candidates fit one walk only, traced.
    flow(20.0, "h000/nic0", "h001/nic1", ["h000.nic0-p0r0", None, None, "h001.nic1-p0r1"],
         "cut_short", 4, 1, candidates=[CANDIDATES[0], {"position": 2, "links": ["p0r1-s01"]}]),
    flow(20.0, "h000/nic1", "h001/nic0",
         ["h000.nic1-p0r1", "p0r1-s00", "p0r0-s00", "h001.nic0-p0r0"], "traced", 3, 0),
]

WINDOW0 = """\
Failing_link 0 3 1
Failing_link 3 0 1
Failing_link 10003 1 1
Failing_link 1 10003 1
FP 0 2 1
FP 0 3 1
FID 10000 10003 0 1 0 0.0
FPT 0 3 1
SS 5000 5 2 0
FID 10002 10001 0 1 0 0.0
FPT 0 2 1
SS 5000 3 0 0
FID 10000 10002 0 0 0 0.0
FPT 0
SS 5000 2 0 0
"""


def topology_yaml() -> str:
    links = "".join(f"  - name: {n}\n    kind: {'nic' if '.' in n else 'fabric'}\n"
                    f"    a: {{device: {ad}, interface: {ai}}}\n"
                    f"    b: {{device: {bd}, interface: {bi}}}\n"
                    for n, ad, ai, bd, bi in LINKS)
    return TOPOLOGY + links


def write_export(d: str, flows=FLOWS, topology=None) -> None:
    with open(os.path.join(d, "topology.yaml"), "w") as f:
        f.write(topology if topology is not None else topology_yaml())
    with open(os.path.join(d, "faults.json"), "w") as f:
        json.dump(FAULTS, f, indent=1)
    with open(os.path.join(d, "flows.jsonl"), "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in flows)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False)


def read(*parts: str) -> str:
    with open(os.path.join(*parts)) as f:
        return f.read()


class Convert(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.export, self.out = self.tmp.name, os.path.join(self.tmp.name, "out")
        self.addCleanup(self.tmp.cleanup)

    def convert(self, *extra: str) -> dict:
        proc = run(CONVERTER, self.export, self.out, *extra)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(read(self.out, "windows.json"))

    def test_topology_numbers_switches_then_nics(self):
        write_export(self.export)
        self.convert()
        self.assertEqual(read(self.out, "topology.txt").splitlines(),
                         ["10000->0", "10002->0", "10001->1", "10003->1",
                          "0 2", "0 3", "1 2", "1 3"])

    def test_each_window_holds_its_flows_paths_counts_and_truth(self):
        write_export(self.export)
        doc = self.convert()
        self.assertEqual(doc["window_s"], 10.0)
        self.assertEqual(read(self.out, "w0000.trace"), WINDOW0)
        w = doc["windows"]
        self.assertEqual([(x["start_s"], x["flows"], x["sent"], x["lost"]) for x in w],
                         [(0.0, 3, 10, 2), (10.0, 1, 2, 1), (20.0, 2, 7, 1)])
        self.assertEqual(w[0]["dropped"]["untraced"], {"flows": 1, "sent": 4, "lost": 1})
        self.assertEqual(w[1]["dropped"]["ambiguous"], {"flows": 1, "sent": 3, "lost": 3})
        self.assertEqual(w[1]["dropped"]["unnamed_hop"], {"flows": 1, "sent": 1, "lost": 0})
        # Active for half a window or more: truth; less: don't care (the RNIC at 10-14 s).
        self.assertEqual(w[0]["truth"], ["loss link p0r0-s01", "loss rnic h001/nic1"])
        self.assertEqual((w[1]["truth"], w[1]["dont_care"]),
                         (["loss link p0r0-s01"], ["loss rnic h001/nic1"]))
        # A faulty switch's links are don't care while it is active.
        self.assertEqual((w[2]["truth"], w[2]["dont_care"]),
                         (["loss link p0r0-s01", "loss switch s00"],
                          ["loss link p0r0-s00", "loss link p0r1-s00"]))
        self.assertEqual(read(self.out, "w0001.trace").splitlines()[2:],
                         ["FP 1 2 0", "FP 1 3 0", "FID 10003 10000 1 0 0 0.0", "FPT 1 2 0",
                          "SS 5000 2 1 0"])
        w2 = read(self.out, "w0002.trace").splitlines()
        self.assertIn("Failing_link 2 2 1", w2)  # the switch, as netarch names a device
        # Candidates that fit one walk only give a known path.
        self.assertEqual(w2[w2.index("FID 10000 10003 0 1 0 0.0") + 1:][:2],
                         ["FPT 0 3 1", "SS 5000 4 1 0"])

    def test_spread_shares_a_cut_short_flow_over_its_candidates(self):
        write_export(self.export)
        doc = self.convert("--cut-short", "spread")
        self.assertEqual(doc["windows"][1]["dropped"]["ambiguous"]["flows"], 0)
        lines = read(self.out, "w0001.trace").splitlines()
        got = [(lines[i + 1], lines[i + 2]) for i, l in enumerate(lines)
               if l.startswith("FID 10000 10003")]
        # Port 50001 of 2 candidates: the remainder goes to the second (via s01).
        self.assertEqual(got, [("FPT 0 2 1", "SS 5000 1 1 0"), ("FPT 0 3 1", "SS 5000 2 2 0")])

    def test_mapping_names_hostmesh_parts(self):
        write_export(self.export)
        self.convert()
        m = json.loads(read(self.out, "mapping.json"))
        self.assertEqual(m["nodes"]["3"], "s01")
        self.assertEqual(m["nodes"]["10001"], "h000/nic1")
        self.assertEqual(m["pairs"]["0 3"]["component"], "loss link p0r0-s01")
        self.assertEqual((m["pairs"]["0 3"]["direction"], m["pairs"]["3 0"]["direction"]),
                         ("up", "down"))
        self.assertEqual(m["pairs"]["1 10003"]["component"], "loss rnic h001/nic1")
        self.assertEqual(m["pairs"]["2 2"], {"switch": "s00", "component": "loss switch s00"})
        self.assertEqual(len(m["pairs"]), 2 * len(LINKS) + 4)

    def test_bad_input_names_file_and_line_or_field(self):
        bad_lost = dict(FLOWS[1], lost=4)
        bad_link = dict(FLOWS[0], path=["h000.nic0-p0r0", "p0r0-s09", "p0r1-s01",
                                        "h001.nic1-p0r1"])
        cases = [
            ([FLOWS[0], bad_lost], None, "flows.jsonl:2: lost: 4 exceeds sent 3"),
            ([FLOWS[0], FLOWS[1], bad_link], None,
             "flows.jsonl:3: path[1]: unknown link 'p0r0-s09'"),
            ([dict(FLOWS[0], path=S01[::-1])], None, "flows.jsonl:1: path: no walk from"),
            (FLOWS, "version: 1\nhosts: [\n", "topology.yaml:3: not YAML"),
        ]
        for flows, topology, message in cases:
            with self.subTest(message=message):
                write_export(self.export, flows, topology)
                proc = run(CONVERTER, self.export, self.out, "--window-s", "10")
                self.assertEqual(proc.returncode, 2)
                self.assertIn(message, proc.stderr)


class Score(unittest.TestCase):
    def test_counts_per_window_and_component(self):
        with tempfile.TemporaryDirectory() as d:
            write_export(d)
            conv = os.path.join(d, "out")
            self.assertEqual(run(CONVERTER, d, conv).returncode, 0)
            os.makedirs(os.path.join(d, "run", "flock"))
            verdicts = {"w0000": "[(0, 3), (3, 0)]",  # the link both ways: one tp; fn the RNIC
                        "w0001": "[(1, 10003), (0, 2), (0, 3)]",  # don't care, fp, tp
                        "w0002": "[(0, 3), (2, 2), (1, 2)]"}  # tp, tp, don't care
            for name, hyp in verdicts.items():
                with open(os.path.join(d, "run", "flock", name + ".out"), "w") as f:
                    f.write(f"Output Hypothesis: {hyp} precsion_recall 1 1\n")
            proc = run(SCORER, conv, os.path.join(d, "run"), "flock")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            rows = [l.split() for l in proc.stdout.splitlines()[1:]]
            self.assertEqual(rows[0][:7], ["flock", "3", "0", "all", "4", "1", "1"])
            self.assertEqual(rows[0][7:], ["0.800", "0.800", "0.800"])


if __name__ == "__main__":
    ctest_unittest.main()
