#!/usr/bin/env python3
"""Score netarch's verdicts per window as hostmesh-sim's scorecard does.

    python3 bench/netarch/score_netarch.py CONVERTED_DIR RUN_DIR [LOCALIZER ...] [--per-window]

CONVERTED_DIR is to_netarch.py's output (windows.json: each window's truth and
don't-care components; mapping.json: netarch's node pairs back to them).
RUN_DIR/<localizer>/wNNNN.out is netarch's output for the window (netarch.sh run):
its "Output Hypothesis: [(a, b), ...]" line is the verdict. tp, fp and fn are
counted per window and component and summed (sim/README.md, "The scorecard");
both directions of a link name one component, as the truth names it. "all" scores
against every truth component, "loss" against the loss ones (netarch names only
losses). A window without a verdict (netarch crashed) names nothing and is counted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

PAIR_RE = re.compile(r"\((\d+), (\d+)\)")


def verdict(path: str, pairs: dict) -> set[str] | None:
    """The components a netarch output names, or None without a verdict line."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [l for l in f if l.startswith("Output Hypothesis:")]
    except FileNotFoundError:
        return None
    if not lines:
        return None
    named = set()
    for a, b in PAIR_RE.findall(lines[-1].split("precsion_recall")[0]):
        entry = pairs.get(f"{a} {b}")
        if entry is None:
            sys.exit(f"{path}: ({a}, {b}) is no pair of mapping.json")
        named.add(entry["component"])
    return named


def counts(named: set, truth: set, dont_care: set) -> tuple[int, int, int]:
    """tp, fp, fn of one window (a don't-care component is neither)."""
    return (len(named & truth), len(named - truth - dont_care), len(truth - named))


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall, F1; nothing named of an empty truth scores 1."""
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def score(conv: str, run: str, localizer: str, per_window: bool) -> dict:
    with open(os.path.join(conv, "windows.json"), encoding="utf-8") as f:
        windows = json.load(f)["windows"]
    with open(os.path.join(conv, "mapping.json"), encoding="utf-8") as f:
        pairs = json.load(f)["pairs"]
    total = {"all": [0, 0, 0], "loss": [0, 0, 0]}
    missing = 0
    for w in windows:
        out = os.path.join(run, localizer, w["file"].replace(".trace", ".out"))
        named = verdict(out, pairs)
        missing += named is None
        named = named or set()
        truth, dont_care = set(w["truth"]), set(w["dont_care"])
        loss_truth = {c for c in truth if c.startswith("loss ")}
        for key, t in (("all", truth), ("loss", loss_truth)):
            total[key] = [x + y for x, y in zip(total[key], counts(named, t, dont_care))]
        if per_window:
            print(f"  {localizer} {w['start_s']:g}-{w['end_s']:g}s named {sorted(named)} "
                  f"truth {sorted(truth)} tp/fp/fn {counts(named, truth, dont_care)}")
    return {"windows": len(windows), "no_verdict": missing, **total}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("converted", help="to_netarch.py's OUT_DIR")
    ap.add_argument("run", help="netarch.sh run's OUT_DIR")
    ap.add_argument("localizers", nargs="*", default=["flock", "007", "netbouncer"])
    ap.add_argument("--per-window", action="store_true", help="print each window's verdict")
    args = ap.parse_args()
    print(f"{'localizer':<11} {'windows':>7} {'no verdict':>10}   {'scope':<5} "
          f"{'tp':>4} {'fp':>4} {'fn':>4} {'precision':>9} {'recall':>7} {'F1':>6}")
    for loc in args.localizers:
        s = score(args.converted, args.run, loc, args.per_window)
        for key in ("all", "loss"):
            tp, fp, fn = s[key]
            p, r, f1 = prf(tp, fp, fn)
            print(f"{loc:<11} {s['windows']:>7} {s['no_verdict']:>10}   {key:<5} "
                  f"{tp:>4} {fp:>4} {fn:>4} {p:>9.3f} {r:>7.3f} {f1:>6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
