"""`fabric probe`: send real UDP probes between two NICs of one host, over a
range of source ports, and show for each port the path ECMP chose (from
`truth-path`), whether the probes arrived and with which TTL. A quick proof
that the fabric carries same-host NIC-to-NIC traffic over every spine."""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys

from . import layout as L
from . import state, truth

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("probe", help="send UDP probes between two NICs of a host and show paths")
    p.add_argument("host", metavar="HOST", help="e.g. h000")
    p.add_argument("--src-nic", type=int, default=0, help="rail of the sending NIC (0)")
    p.add_argument("--dst-nic", type=int, default=1, help="rail of the receiving NIC (1)")
    p.add_argument("--ports", type=int, default=16, help="how many source ports (16)")
    p.add_argument("--first-port", type=int, default=49152, help="first source port (49152)")
    p.add_argument("--count", type=int, default=1, help="probes per source port (1)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_probe)


def _nic(lay: L.Layout, host: str, rail: int) -> L.Endpoint:
    if host not in lay.hosts:
        raise L.LayoutError(f"no host {host!r} (hosts are {lay.hosts[0]}..{lay.hosts[-1]})")
    if not 0 <= rail < lay.size.rails:
        raise L.LayoutError(f"no NIC on rail {rail} (rails are 0..{lay.size.rails - 1})")
    return lay.nic_link(lay.hosts.index(host), rail).a


def send(src: L.Endpoint, dst: L.Endpoint, sports: list[int], count: int = 1,
         dport: int = L.PROBE_DST_PORT, wait: float = 0.5) -> dict:
    """Runs hmfabric.udp_probe inside the host's namespace; returns its JSON."""
    cmd = ["ip", "netns", "exec", src.namespace, sys.executable, "-m", "hmfabric.udp_probe",
           "--src-dev", src.ifname, "--src-ip", src.ip, "--dst-dev", dst.ifname,
           "--dst-ip", dst.ip, "--dport", str(dport), "--sports", ",".join(map(str, sports)),
           "--count", str(count), "--wait", str(wait)]
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def cmd_probe(args: argparse.Namespace) -> int:
    lay, _ = state.current(state.prefix())
    if args.src_nic == args.dst_nic:
        raise L.LayoutError("--src-nic and --dst-nic must differ")
    if not 1 <= args.ports <= 1024 or not 1024 <= args.first_port <= 65535 - args.ports:
        raise L.LayoutError("--ports must be 1..1024 and the port range inside 1024..65535")
    src, dst = _nic(lay, args.host, args.src_nic), _nic(lay, args.host, args.dst_nic)
    sports = list(range(args.first_port, args.first_port + args.ports))
    result = send(src, dst, sports, args.count)
    for row in result["ports"]:
        hops = truth.path(lay, src.ip, dst.ip, row["sport"])
        row["path"] = [h.device for h in hops]
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        print_table(result)
    lost = sum(r["sent"] - r["received"] for r in result["ports"])
    return 1 if lost else 0


def print_table(result: dict) -> None:
    print(f"probes {result['src_ip']} -> {result['dst_ip']}:{result['dport']}")
    print(f"{'sport':>6}  {'sent':>4}  {'recv':>4}  {'ttl':>3}  path")
    per_spine: collections.Counter[str] = collections.Counter()
    for r in result["ports"]:
        spines = [d for d in r["path"] if d.startswith("s")]
        per_spine.update({s: r["received"] for s in spines})
        ttl = "-" if r["ttl"] is None else str(r["ttl"])
        print(f"{r['sport']:>6}  {r['sent']:>4}  {r['received']:>4}  {ttl:>3}  "
              + " > ".join(r["path"]))
    print("received per spine: " + ", ".join(f"{s}={n}" for s, n in sorted(per_spine.items())))
