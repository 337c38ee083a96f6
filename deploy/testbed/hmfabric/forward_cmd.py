"""`fabric forward`: make a TCP port of the management namespace (the
analyzer's HTTP API, a Prometheus) reachable from a browser on this machine.

Nothing of the testbed is addressed in the root namespace, so instead of a
link a small relay listens on 127.0.0.1 there and, per connection, opens the
far end from inside the management namespace (socat). The relay's pid is kept
in the state directory; `fabric forward --stop` and `fabric down` end it."""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import signal
import subprocess

from . import layout as L
from . import netns, state


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("forward", help="relay 127.0.0.1:PORT to a port in the mgmt namespace")
    p.add_argument("--port", type=int, default=L.ANALYZER_HTTP_PORT,
                   help=f"port at the analyzer's address ({L.ANALYZER_HTTP_PORT})")
    p.add_argument("--to", default=L.ANALYZER_IP, help=f"address in mgmt ({L.ANALYZER_IP})")
    p.add_argument("--local-port", type=int, help="port on 127.0.0.1 (default: --port)")
    p.add_argument("--stop", action="store_true", help="stop every relay of this fabric")
    p.set_defaults(func=cmd_forward)


def _pid_files(pfx: str) -> list[str]:
    return glob.glob(os.path.join(state.state_dir(pfx), "forward-*.pid"))


def stop_all(pfx: str) -> int:
    """Ends every relay of fabric `pfx`; returns how many there were."""
    files = _pid_files(pfx)
    for path in files:
        with contextlib.suppress(OSError, ValueError):
            with open(path) as f:
                os.killpg(int(f.read()), signal.SIGTERM)  # the relay and its children
        with contextlib.suppress(OSError):
            os.remove(path)
    return len(files)


def cmd_forward(args: argparse.Namespace) -> int:
    pfx = state.prefix()
    if args.stop:
        print(f"fabric forward: stopped {stop_all(pfx)} relay(s)")
        return 0
    netns.require_root()
    state.current(pfx)  # refuse without a fabric
    local = args.local_port or args.port
    for port in (args.port, local):
        if not 1 <= port <= 65535:
            raise ValueError(f"port {port} is not in 1..65535")
    mgmt = L.namespace(L.MGMT_DEVICE, pfx)
    # socat splits its own address at ':', so the inner command escapes them.
    far = f"ip netns exec {mgmt} socat STDIO TCP\\:{args.to}\\:{args.port}"
    relay = subprocess.Popen(
        ["socat", f"TCP-LISTEN:{local},bind=127.0.0.1,reuseaddr,fork", f"EXEC:{far}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True)
    try:
        relay.wait(timeout=0.3)  # a relay that cannot bind exits at once
        raise netns.NetnsError(f"socat could not listen on 127.0.0.1:{local}: "
                               + relay.stderr.read().decode().strip())
    except subprocess.TimeoutExpired:
        pass
    with open(os.path.join(state.state_dir(pfx), f"forward-{local}.pid"), "w") as f:
        f.write(str(relay.pid))
    print(f"http://127.0.0.1:{local}/ -> {args.to}:{args.port} in {mgmt} "
          "(stop: fabric forward --stop)")
    return 0
