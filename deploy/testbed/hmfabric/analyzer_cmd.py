"""`fabric restart-analyzer`: stop the analyzer `fabric start` ran — politely
(SIGTERM) or as a crash would (`--kill`, SIGKILL) — and start it again on the
same config and data directory while the agents keep probing. The agents
reconnect with backoff and resend whatever the dead analyzer had not
acknowledged; the new analyzer rebuilds its state from its store."""

from __future__ import annotations

import argparse
import signal
import time

from . import layout as L
from . import netns, start_cmd, state


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("restart-analyzer", help="stop (or --kill) the analyzer and start it again")
    p.add_argument("--kill", action="store_true",
                   help="SIGKILL, as a crash: nothing is flushed or closed")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for the new analyzer to answer (60)")
    p.set_defaults(func=cmd_restart)


def restart(pfx: str, kill: bool, timeout: float) -> dict:
    procs = start_cmd._load(pfx)
    entry = next((p for p in procs if p["name"] == "analyzer"), None)
    if entry is None:
        raise state.StateError(f"no analyzer started on fabric {pfx!r}: run `fabric start`")
    if start_cmd._ours(entry["pid"], entry["binary"]):
        if kill:
            start_cmd._signal(entry["pid"], signal.SIGKILL)
            end = time.monotonic() + 5.0
            while netns.running(entry["pid"]) and time.monotonic() < end:
                time.sleep(0.02)
        else:
            start_cmd._terminate([entry], grace=10.0)
    argv = [entry["binary"], "--config", start_cmd.analyzer_config_path(pfx)]
    entry["pid"] = start_cmd._spawn(L.namespace(L.MGMT_DEVICE, pfx), argv, entry["log"])
    start_cmd._save(pfx, procs)
    start_cmd._wait_ready(pfx, [entry], timeout)
    return entry


def cmd_restart(args: argparse.Namespace) -> int:
    netns.require_root()
    pfx = state.prefix()
    t0 = time.monotonic()
    entry = restart(pfx, args.kill, args.timeout)
    how = "killed" if args.kill else "stopped"
    print(f"fabric restart-analyzer: {how} and started again (pid {entry['pid']}), answering in "
          f"{time.monotonic() - t0:.1f} s")
    return 0
