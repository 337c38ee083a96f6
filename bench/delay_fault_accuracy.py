#!/usr/bin/env python3
"""How precisely the testbed's delay faults delay: the figures the timing tests
(tests/testbed/test_faults_timing.py) do not assert, because on a shared
machine they depend on its load.

    sudo HOSTMESH_BUILD_DIR=build python3 bench/delay_fault_accuracy.py [--ms 0.2,1,10] [--rounds 50]

Builds a 2 hosts x 2 rails x 2 spines fabric (prefix $HOSTMESH_FABRIC_PREFIX,
default "hm", then "bench-"), sends UDP between two NICs of h000 over both
spines (one-way delay: sender's clock at send, kernel receive timestamp at
arrival), and for each configured delay, as `delay` on p0r0-s00 and as
`wire-delay` at every spine, prints the added delay's percentiles against the
undelayed baseline, with the machine's load average beside them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "deploy", "testbed"))
from hmfabric import fault_probe as fp  # noqa: E402
from hmfabric import layout  # noqa: E402

FABRIC = os.path.join(HERE, "..", "deploy", "testbed", "fabric")
PREFIX = (os.environ.get("HOSTMESH_FABRIC_PREFIX") or "hm") + "bench-"
LINK = "p0r0-s00"
SPORTS = range(40000, 40060)


def fabric(*args: str) -> str:
    env = dict(os.environ, HOSTMESH_FABRIC_PREFIX=PREFIX)
    proc = subprocess.run([sys.executable, FABRIC, *args], env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"fabric {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if q < 100 else max(values)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ms", default="0.2,1,10", help="configured delays, comma-separated (ms)")
    ap.add_argument("--rounds", type=int, default=50, help="packets per source port (50)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (network namespaces)")
    lay = layout.build_layout(layout.Size(2, 2, 2, 1), PREFIX)
    src, dst = lay.nic_link(0, 0).a, lay.nic_link(0, 1).a
    fabric("down")
    fabric("up", "--hosts", "2", "--rails", "2", "--spines", "2")
    try:
        via = [p for p, hops in fp.ports_by_path(lay, src.ip, dst.ip, SPORTS).items()
               if "s00" in hops][:20]

        def delays(ports) -> list[float]:
            stats = fp.measure(lay.ns("h000"), ("nic0", src.ip), ("nic1", dst.ip), ports,
                               args.rounds, interval=0.005, wait=0.5)
            return [d / 1e6 for d in fp.total(stats).delays_ns]

        print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} on "
              f"{os.cpu_count()} CPUs; {args.rounds * 20} packets per row")
        print(f"{'fault':<22} {'median':>8} {'p10':>8} {'p90':>8} {'p99':>8} {'min':>8} "
              f"{'error':>7}  (added ms)")
        for ms in (float(x) for x in args.ms.split(",")):
            for kind, flags in (("delay", ("--link", LINK, "--ms", str(ms), "--from", "p0r0")),
                                ("wire-delay", ("--ms", str(ms)))):
                base = statistics.median(delays(via))
                fabric("fault", "add", kind, *flags)
                added = [d - base for d in delays(via)]
                fabric("fault", "clear")
                med = statistics.median(added)
                print(f"{kind + ' ' + str(ms) + ' ms':<22} {med:8.3f} {percentile(added, 10):8.3f} "
                      f"{percentile(added, 90):8.3f} {percentile(added, 99):8.3f} "
                      f"{min(added):8.3f} {(med / ms - 1) * 100:+6.1f}%")
    finally:
        fabric("down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
