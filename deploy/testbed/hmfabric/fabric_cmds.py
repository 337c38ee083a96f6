"""The fabric's own subcommands: up, down, status, topology, agent-config, exec,
truth-path. Thin: parse, call build/inventory/truth, print."""

from __future__ import annotations

import argparse
import json
import os
import time

from . import build, inventory, netns, pki, state, truth
from . import layout as L

EXIT_DOWN = 3  # `status` when no fabric is up (like `systemctl status` of a stopped unit)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("up", help="build a fabric in network namespaces")
    _size_flags(p, required=True)
    p.add_argument("--hash-seed", type=_hash_seed, default=L.DEFAULT_HASH_SEED,
                   help="fib_multipath_hash_seed of every switch (0: the kernel's random seed)")
    p.add_argument("--icmp-unlimited", action="store_true",
                   help="switches and hosts answer every traceroute probe (default: Linux limits)")
    p.set_defaults(func=cmd_up)

    sub.add_parser("down", help="remove the fabric (and anything left of a failed up)"
                   ).set_defaults(func=cmd_down)
    sub.add_parser("status", help=f"is it up, and how big (exit {EXIT_DOWN} when down)"
                   ).set_defaults(func=cmd_status)

    p = sub.add_parser("topology", help="print the inventory YAML of the fabric")
    p.add_argument("--json", action="store_true", help="the same data as JSON")
    _size_flags(p, required=False)
    p.set_defaults(func=cmd_topology)

    p = sub.add_parser("agent-config", help="print the agent config YAML of a host")
    p.add_argument("host", metavar="HOST", help="e.g. h003")
    p.add_argument("--tls", action="store_true",
                   help="upload over mutual TLS with the fabric's certificates (pki/, made if "
                        "missing), as `fabric start` does; default: insecure, for a test "
                        "double of the analyzer")
    _size_flags(p, required=False)
    p.set_defaults(func=cmd_agent_config)

    p = sub.add_parser("exec", help="run a command in a device's namespace")
    p.add_argument("device", metavar="HOST|SWITCH|mgmt")
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD...")
    p.set_defaults(func=cmd_exec)

    p = sub.add_parser("truth-path", help="the path of a UDP 5-tuple, from every hop's FIB")
    p.add_argument("src", metavar="SRC_IP")
    p.add_argument("dst", metavar="DST_IP")
    p.add_argument("sport", metavar="SPORT", type=_port)
    p.add_argument("--dport", type=_port, default=L.PROBE_DST_PORT)
    p.add_argument("--json", action="store_true", help="a JSON list of hops")
    p.set_defaults(func=cmd_truth_path)


def _size_flags(p: argparse.ArgumentParser, required: bool) -> None:
    note = "" if required else " (default: the fabric that is up)"
    p.add_argument("--hosts", type=int, required=required, help="hosts" + note)
    p.add_argument("--rails", type=int, required=required, help="rails: NICs per host" + note)
    p.add_argument("--spines", type=int, required=required, help="spine switches" + note)
    p.add_argument("--pods", type=int, default=1 if required else None,
                   help="pods, each with its own rail switches" + (note or " (default 1)"))


def _port(text: str) -> int:
    value = int(text)
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError(f"{text} is not a UDP port")
    return value


def _hash_seed(text: str) -> int:
    value = int(text, 0)
    if not 0 <= value < 1 << 32:
        raise argparse.ArgumentTypeError(f"{text} is not a 32-bit seed")
    return value


def _layout(args: argparse.Namespace) -> L.Layout:
    """The size given by flags, else the fabric that is up."""
    pfx = state.prefix()
    flags = (args.hosts, args.rails, args.spines)
    if all(v is None for v in flags) and args.pods is None:
        try:
            return state.current(pfx)[0]
        except state.StateError as exc:
            raise state.StateError(f"{exc}, or give --hosts, --rails and --spines") from None
    if any(v is None for v in flags):
        raise ValueError("give all of --hosts, --rails and --spines, or none")
    return L.build_layout(L.Size(*flags, args.pods or 1), pfx)


def cmd_up(args: argparse.Namespace) -> int:
    netns.require_root()
    pfx = state.prefix()
    size = L.Size(args.hosts, args.rails, args.spines, args.pods)
    lay = L.build_layout(size, pfx)
    present = build.fabric_namespaces(pfx)
    if present or state.load(pfx):
        raise state.StateError(f"a fabric with prefix {pfx!r} is already up ({len(present)} "
                               "namespaces): run `fabric down` first")
    start = time.monotonic()
    try:
        build.up(lay, build.Options(args.hash_seed, args.icmp_unlimited))
    except BaseException:
        build.down(pfx)  # no half-built fabric left behind
        raise
    state.save(pfx, state.record(size, args.hash_seed, args.icmp_unlimited))
    print(f"fabric up: {size.describe()}, {len(lay.namespaces)} namespaces with prefix "
          f"{pfx!r}, in {time.monotonic() - start:.2f} s")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    netns.require_root()
    pfx = state.prefix()
    start = time.monotonic()
    removed = build.down(pfx)
    if removed:
        print(f"fabric down: removed {removed} namespaces with prefix {pfx!r}, "
              f"in {time.monotonic() - start:.2f} s")
    else:
        print(f"fabric down: nothing with prefix {pfx!r} was up")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    pfx = state.prefix()
    rec = state.load(pfx)
    present = len(build.fabric_namespaces(pfx))
    if rec is None:
        if present:
            print(f"fabric {pfx}: broken, {present} namespaces but no state (a failed up?): "
                  "run `fabric down`")
            return 1
        print(f"fabric {pfx}: down")
        return EXIT_DOWN
    size = state.size_of(rec)
    expected = len(L.build_layout(size, pfx).namespaces)
    icmp = "unlimited" if rec["icmp_unlimited"] else "Linux rate limits"
    print(f"fabric {pfx}: {'up' if present == expected else 'broken'}, {size.describe()}, "
          f"hash seed {rec['hash_seed']}, ICMP {icmp}, {present}/{expected} namespaces")
    return 0 if present == expected else 1


def cmd_topology(args: argparse.Namespace) -> int:
    lay = _layout(args)
    data = inventory.inventory(lay)
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(inventory.to_yaml(data, inventory.inventory_header(lay)), end="")
    return 0


def cmd_agent_config(args: argparse.Namespace) -> int:
    lay = _layout(args)
    tls = None
    if args.tls:
        pki_dir = pki.ensure(state.state_dir(state.prefix()), [args.host])
        tls = pki.agent_tls(pki_dir, args.host)
    data = inventory.agent_config(lay, args.host, tls=tls)
    print(inventory.to_yaml(data, inventory.agent_config_header(args.host)), end="")
    return 0


def cmd_exec(args: argparse.Namespace) -> int:
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        raise ValueError("nothing to run: fabric exec DEVICE -- CMD...")
    pfx = state.prefix()
    ns = L.namespace(args.device, pfx)
    if not L.is_fabric_namespace(ns, pfx) or ns not in netns.list_namespaces():
        raise state.StateError(f"no device {args.device!r} in the fabric {pfx!r}")
    os.execvp("ip", ["ip", "netns", "exec", ns, *cmd])  # its exit code and stdio are ours


def cmd_truth_path(args: argparse.Namespace) -> int:
    lay = state.current(state.prefix())[0]
    hops = truth.path(lay, args.src, args.dst, args.sport, args.dport)
    if args.json:
        print(json.dumps([h.as_dict() for h in hops], indent=2))
    else:
        print(truth.format_hops(hops), end="")
    return 0
