"""Command line of `fabric`: parses flags and hands plain values to the modules."""

from __future__ import annotations

import argparse
import sys

from . import analyzer_cmd, fabric_cmds, faults, forward_cmd, probe_cmd, start_cmd


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fabric", description="Emulated rail-optimized RoCE fabric in network namespaces.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    fabric_cmds.register(sub)  # up, down, status, topology, agent-config, exec, truth-path
    faults.register(sub)  # fault add|list|clear
    probe_cmd.register(sub)  # probe
    forward_cmd.register(sub)  # forward
    start_cmd.register(sub)  # start, stop: analyzer and agents
    analyzer_cmd.register(sub)  # restart-analyzer
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # one clear line for the operator, not a traceback
        if getattr(args, "debug", False):
            raise
        print(f"fabric {args.command}: error: {exc}", file=sys.stderr)
        return 1
