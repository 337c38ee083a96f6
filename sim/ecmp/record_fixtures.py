#!/usr/bin/env python3
"""Records the testbed kernel's ECMP paths as fixtures for the simulator's
ECMP model (tests/sim/ecmp/fabric_router_fixture_test.cc). Run by hand, as
root, never in CI:

    sudo sim/ecmp/record_fixtures.py [--out tests/sim/ecmp/fixtures] [--flows 300]

For each case below it brings up a testbed fabric (prefix
$HOSTMESH_FABRIC_PREFIX, default "hme-"), optionally downs a link, asks
`fabric truth-path` (hmfabric.truth.path: `ip route get ... iif ...` on every
hop) for random (source NIC, destination NIC, source port) triples, takes the
fabric down and writes one file per case:

    # comments
    shape hosts=8 rails=4 spines=4 pods=1 tiers=2
    seed 1
    dport 4791
    dead p0r0-s01                      (only when a link is down)
    198.18.0.1 198.18.0.17 49152 h000.nic0-p0r0 p0r0-s00 p0r1-s00 h000.nic1-p0r1

Links are named as in `fabric topology`, source NIC's link first. The random
triples come from a fixed seed, so a rerun on the same kernel rewrites the same
files. The testbed has two tiers only (`fabric up` has no third tier), so
there are no three-tier fixtures.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import subprocess
import sys
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
FABRIC = os.path.join(REPO, "deploy", "testbed", "fabric")
sys.path.insert(0, os.path.join(REPO, "deploy", "testbed"))

from hmfabric import layout as L  # noqa: E402
from hmfabric import state, truth  # noqa: E402


@dataclass(frozen=True)
class Case:
    name: str
    hosts: int
    rails: int
    spines: int
    pods: int = 1
    seed: int = 1
    dead: list[str] = field(default_factory=list)  # `fault add link-down` each
    # Only flows whose source NIC hangs off this rail switch and whose
    # destination does not (the static testbed reroutes only at the switch
    # that owns the downed link; see sim/ecmp/README.md).
    src_switch: str | None = None


CASES = [
    Case("default_8x4x4_seed1", 8, 4, 4),
    # Another seed, one above 2^31 (the sysctl is a u32), and 6 spines: upper
    # bounds that are not powers of two.
    Case("12x4x6_seed2654435769", 12, 4, 6, seed=2654435769),
    # Two pods and 3 spines: cross-pod paths, bounds rounded to nearest.
    Case("16x4x3_2pods_seed1", 16, 4, 3, pods=2),
    # A downed uplink: the rail switch's kernel drops that nexthop and
    # rebalances the bounds over the 3 alive ones (fib_rebalance).
    Case("8x4x4_seed1_dead_p0r0-s01", 8, 4, 4, dead=["p0r0-s01"], src_switch="p0r0"),
]


def fabric(*args: str) -> str:
    return subprocess.run([FABRIC, *args], check=True, text=True,
                          stdout=subprocess.PIPE).stdout


def link_of_ip(lay: L.Layout) -> dict[str, str]:
    return {end.ip: link.name for link in lay.links for end in (link.a, link.b)}


def flows(lay: L.Layout, case: Case, count: int, rng: random.Random) -> list[tuple[str, str, int]]:
    nics = list(lay.nic_links)
    out = []
    while len(out) < count:
        src, dst = rng.choice(nics), rng.choice(nics)
        if src is dst:
            continue
        if case.src_switch and (src.b.device != case.src_switch or
                                dst.b.device == case.src_switch):
            continue
        # Mostly the agent's ephemeral range, some below the dport (the kernel
        # sorts the ports before hashing).
        sport = rng.randint(49152, 65535) if rng.random() < 0.8 else rng.randint(1, 4790)
        out.append((src.a.ip, dst.a.ip, sport))
    return out


def record(case: Case, count: int, dport: int) -> list[str]:
    fabric("down")
    fabric("up", "--hosts", str(case.hosts), "--rails", str(case.rails), "--spines",
           str(case.spines), "--pods", str(case.pods), "--hash-seed", str(case.seed))
    try:
        for link in case.dead:
            fabric("fault", "add", "link-down", "--link", link)
        lay = state.current(state.prefix())[0]
        names = link_of_ip(lay)
        rng = random.Random(f"{case.name}:{count}")
        lines = [
            f"# {case.name}: `fabric truth-path` on kernel {platform.release()}, "
            "recorded by sim/ecmp/record_fixtures.py",
            "# src_ip dst_ip sport links (source NIC's link first)",
            f"shape hosts={case.hosts} rails={case.rails} spines={case.spines} "
            f"pods={case.pods} tiers=2",
            f"seed {case.seed}",
            f"dport {dport}",
        ]
        lines += [f"dead {link}" for link in case.dead]
        for src, dst, sport in flows(lay, case, count, rng):
            hops = truth.path(lay, src, dst, sport, dport)
            # Hop k>0 arrived over the link holding its ingress address.
            links = [names[h.ingress_ip] for h in hops[1:]]
            lines.append(" ".join([src, dst, str(sport), *links]))
        return lines
    finally:
        fabric("down")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "tests", "sim", "ecmp", "fixtures"))
    parser.add_argument("--flows", type=int, default=300)
    parser.add_argument("--dport", type=int, default=L.PROBE_DST_PORT)
    parser.add_argument("--case", action="append", help="only these cases (by name)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("record_fixtures: needs root (network namespaces)", file=sys.stderr)
        return 1
    os.environ.setdefault("HOSTMESH_FABRIC_PREFIX", "hme-")
    os.makedirs(args.out, exist_ok=True)
    for case in CASES:
        if args.case and case.name not in args.case:
            continue
        count = args.flows // 2 if case.dead else args.flows
        lines = record(case, count, args.dport)
        path = os.path.join(args.out, case.name + ".txt")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        print(f"{path}: {len(lines)} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
