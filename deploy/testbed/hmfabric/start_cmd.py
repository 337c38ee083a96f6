"""`fabric start` / `fabric stop`: the real analyzer in the management
namespace and one real agent per host namespace, on a fabric that is up.

`start` writes into the state directory (/run/hostmesh-fabric/<prefix>/):
inventory.yaml (`fabric topology`), analyzer.yaml, agent-hNNN.yaml (`fabric
agent-config`, with a tls block: every agent uploads over mutual TLS with
the certificates of pki/, see pki.py), the analyzer's data directory analyzer-data/, one log file
per process (analyzer.log, agent-hNNN.log) and processes.json, the pids.
Every process is detached (its own session), so `start` returns once the
analyzer's /api/v1/status and every agent's /metrics answer. `stop` (and
`fabric down`) ends the agents, then the analyzer: SIGTERM, SIGKILL after a
grace. Binaries come from $HOSTMESH_BUILD_DIR (default <repo>/build)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time

from . import inventory
from . import layout as L
from . import cpu_cgroup, netns, pki, state

BUILD_DIR_ENV = "HOSTMESH_BUILD_DIR"
REPO_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ANALYZER_BIN = os.path.join("analyzer", "main", "hostmesh-analyzer")
AGENT_BIN = os.path.join("agent", "main", "hostmesh-agent")
PROCESSES_FILE = "processes.json"
API_URL = f"http://{L.ANALYZER_IP}:{L.ANALYZER_HTTP_PORT}/api/v1/"
AGENT_POOL_SIZE = inventory.AGENT_POOL_SIZE


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("start", help="run the analyzer (mgmt) and one agent per host")
    p.add_argument("--window", default="20s", help="analyzer window (default 20s)")
    p.add_argument("--grace", help="analyzer grace for late uploads (default: half the window)")
    p.add_argument("--build", metavar="DIR",
                   help=f"build directory with the binaries (default ${BUILD_DIR_ENV} or "
                        "<repo>/build)")
    p.add_argument("--log-level", default="info", help="of the analyzer and agents (info)")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for every process to answer (60)")
    inv = p.add_mutually_exclusive_group()
    inv.add_argument("--no-inventory", action="store_true",
                     help="start the analyzer without an inventory: it learns the fabric "
                          "from the agents' traceroutes")
    inv.add_argument("--inventory", metavar="FILE",
                     help="give the analyzer this inventory instead of the fabric's own "
                          "(e.g. an edited copy, to see its disagreements with the traces)")
    p.add_argument("--agent-ports", type=_port_range, metavar="MIN-MAX",
                   help="UDP source ports the agents probe from (default the agent's, "
                        f"49152-65535); at least the pool ({AGENT_POOL_SIZE}); exactly "
                        f"{AGENT_POOL_SIZE} means every NIC probes with all of them, always")
    p.add_argument("--no-agent", action="append", default=[], metavar="HOST",
                   help="start no agent on HOST (its agent runs elsewhere, e.g. a soft-RoCE "
                        "VM of rxe/rxevm); repeatable")
    p.set_defaults(func=cmd_start)

    p = sub.add_parser("stop", help="stop the agents and the analyzer `start` ran")
    p.add_argument("--grace", type=float, default=5.0,
                   help="seconds between SIGTERM and SIGKILL (5)")
    p.set_defaults(func=cmd_stop)


def _port_range(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)-(\d+)", text.strip())
    lo, hi = (int(m[1]), int(m[2])) if m else (0, 0)
    if not m or not 1024 <= lo <= hi <= 65535 or hi - lo + 1 < AGENT_POOL_SIZE:
        raise argparse.ArgumentTypeError(
            f"--agent-ports {text!r}: use MIN-MAX within 1024-65535 holding at least "
            f"{AGENT_POOL_SIZE} ports (the agents' pool)")
    return lo, hi


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _seconds(text: str) -> float:
    m = _DURATION.fullmatch(text.strip())
    if not m:
        raise ValueError(f"{text!r} is not a duration like 10s, 500ms, 1m")
    return float(m.group(1)) * _UNIT[m.group(2)]


def _duration(seconds: float) -> str:
    return f"{int(round(seconds * 1000))}ms"


def binaries(build_dir: str | None) -> tuple[str, str]:
    """(analyzer, agent) paths, or a ValueError saying how to build them."""
    build = build_dir or os.environ.get(BUILD_DIR_ENV) or os.path.join(REPO_DIR, "build")
    build = os.path.abspath(build)
    paths = (os.path.join(build, ANALYZER_BIN), os.path.join(build, AGENT_BIN))
    missing = [p for p in paths if not os.access(p, os.X_OK)]
    if missing:
        raise ValueError(f"not built: {', '.join(missing)} (run scripts/build.sh, or point "
                         f"--build / ${BUILD_DIR_ENV} at a build directory)")
    return paths


def analyzer_config(sdir: str, window: str, grace: str, log_level: str,
                    inventory_path: str | None, tls: dict) -> str:
    """The analyzer's config; inventory_path None: none (the analyzer learns the
    fabric); tls its grpc.tls block (pki.analyzer_tls)."""
    return "\n".join(line for line in [
        "# hostmesh analyzer config, generated by `fabric start`",
        f"log_level: {log_level}",
        "grpc:",
        f"  listen: {L.ANALYZER_IP}:{L.ANALYZER_GRPC_PORT}",
        "  tls:",
        *(f"    {key}: {path}" for key, path in tls.items()),
        "http:",
        f"  listen: {L.ANALYZER_IP}:{L.ANALYZER_HTTP_PORT}",
        f"data_dir: {os.path.join(sdir, 'analyzer-data')}",
        f"inventory: {inventory_path}" if inventory_path else "",
        f"window: {window}",
        f"grace: {grace}",
    ] if line) + "\n"


def analyzer_config_path(pfx: str) -> str:
    return os.path.join(state.state_dir(pfx), "analyzer.yaml")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _spawn(ns: str, argv: list[str], log: str) -> int:
    with open(log, "ab") as out:
        proc = subprocess.Popen(["ip", "netns", "exec", ns, *argv], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return proc.pid  # `ip netns exec` execs the binary: same pid, own session


def _load(pfx: str) -> list[dict]:
    try:
        with open(os.path.join(state.state_dir(pfx), PROCESSES_FILE)) as f:
            return json.load(f)
    except (FileNotFoundError, ValueError):
        return []


def _save(pfx: str, procs: list[dict]) -> None:
    path = os.path.join(state.state_dir(pfx), PROCESSES_FILE)
    _write(path + ".tmp", json.dumps(procs, indent=2) + "\n")
    os.replace(path + ".tmp", path)


def _ours(pid: int, binary: str) -> bool:
    """Still running and still that binary (not a reused pid)."""
    if not netns.running(pid):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return os.path.basename(binary).encode() in f.read()
    except OSError:
        return False


def recorder_dir(pfx: str, host: str) -> str:
    """Where the agent of `host` writes its local flight captures (SIGUSR2)."""
    return os.path.join(state.state_dir(pfx), "recorder", host)


def running_pids(pfx: str, name: str) -> list[int]:
    """Pids of the processes `start` ran as `name` ("analyzer", "h003") that
    still run; empty when nothing was started."""
    return [p["pid"] for p in _load(pfx) if p["name"] == name and _ours(p["pid"], p["binary"])]


def _curl(ns: str, url: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", ns, "curl", "-sf", "-m", "2", url],
                          capture_output=True, text=True, check=False)


def _wait_ready(pfx: str, procs: list[dict], timeout: float) -> None:
    """Until the analyzer's status and every agent's /metrics answer, or a
    process exits, or the deadline passes (then a ValueError naming what is late)."""
    mgmt = L.namespace(L.MGMT_DEVICE, pfx)
    pending = {p["name"]: p for p in procs}
    deadline = time.monotonic() + timeout
    while pending:
        for name, p in list(pending.items()):
            # Not _ours: while the process execs, /proc/PID/cmdline can read
            # empty for a moment (seen under load), and a pid we just started
            # cannot have been reused.
            if not netns.running(p["pid"]):
                raise ValueError(f"{name} exited at start; see {p['log']}: "
                                 + _tail(p["log"]))
            if _curl(mgmt, p["url"]).returncode == 0:
                del pending[name]
        if not pending:
            return
        if time.monotonic() > deadline:
            raise ValueError(f"not answering after {timeout:.0f} s: {', '.join(sorted(pending))}"
                             f" (logs in {state.state_dir(pfx)})")
        time.sleep(0.3)


def _tail(path: str, lines: int = 5) -> str:
    try:
        with open(path, errors="replace") as f:
            return " | ".join(f.read().strip().splitlines()[-lines:])
    except OSError:
        return "(no log)"


def start(pfx: str, window: str, grace: str | None, build_dir: str | None,
          log_level: str = "info", timeout: float = 60.0,
          agent_ports: tuple[int, int] | None = None, no_inventory: bool = False,
          inventory_file: str | None = None, no_agent: list[str] | None = None) -> list[dict]:
    lay, _ = state.current(pfx)
    for host in no_agent or []:
        lay.host_index(host)  # a clear error for a host the fabric has not
    analyzer_bin, agent_bin = binaries(build_dir)
    if any(_ours(p["pid"], p["binary"]) for p in _load(pfx)):
        raise state.StateError(f"already started on fabric {pfx!r}: run `fabric stop` first")
    window_s = _seconds(window)
    grace = grace or _duration(window_s / 2)
    _seconds(grace)
    sdir = state.state_dir(pfx)
    os.makedirs(os.path.join(sdir, "analyzer-data"), exist_ok=True)
    _write(os.path.join(sdir, "inventory.yaml"),
           inventory.to_yaml(inventory.inventory(lay), inventory.inventory_header(lay)))
    if inventory_file is not None and not os.path.isfile(inventory_file):
        raise ValueError(f"--inventory {inventory_file}: no such file")
    analyzer_inventory = (None if no_inventory else os.path.abspath(inventory_file)
                          if inventory_file else os.path.join(sdir, "inventory.yaml"))
    pki_dir = pki.ensure(sdir, list(lay.hosts))  # every agent and the analyzer on mutual TLS
    cfg = analyzer_config_path(pfx)
    _write(cfg, analyzer_config(sdir, _duration(window_s), grace, log_level, analyzer_inventory,
                                pki.analyzer_tls(pki_dir)))

    procs: list[dict] = []
    try:
        log = os.path.join(sdir, "analyzer.log")
        procs.append({"name": "analyzer", "device": L.MGMT_DEVICE, "binary": analyzer_bin,
                      "log": log, "url": API_URL + "status",
                      "pid": _spawn(L.namespace(L.MGMT_DEVICE, pfx),
                                    [analyzer_bin, "--config", cfg], log)})
        _save(pfx, procs)
        # Before the agents: each sees its own cgroup, as on a real host.
        if (why := cpu_cgroup.expose(pfx)) is not None:
            print(f"fabric start: warning: the agents cannot see their cgroups ({why}); "
                  "their self-protection is blind to the cpu fault", file=sys.stderr)
        for h, host in enumerate(lay.hosts):
            if host in (no_agent or []):
                continue
            agent_cfg = os.path.join(sdir, f"agent-{host}.yaml")
            config = inventory.agent_config(lay, host, agent_ports, pki.agent_tls(pki_dir, host))
            # Each agent's local flight captures (SIGUSR2) in a folder of its own.
            config["recorder"] = {"state_dir": recorder_dir(pfx, host)}
            _write(agent_cfg, inventory.to_yaml(config, inventory.agent_config_header(host)))
            log = os.path.join(sdir, f"agent-{host}.log")
            procs.append({"name": host, "device": host, "binary": agent_bin, "log": log,
                          "url": f"http://{L.mgmt_ip(h)}:{L.AGENT_METRICS_PORT}/metrics",
                          "pid": _spawn(lay.ns(host), [agent_bin, "--config", agent_cfg,
                                                       "--log-level", log_level], log)})
        _save(pfx, procs)
        _wait_ready(pfx, procs, timeout)
    except BaseException:
        stop(pfx, grace=2.0)
        raise
    return procs


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)  # its own session: the process and anything it started
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _terminate(procs: list[dict], grace: float) -> None:
    live = [p for p in procs if _ours(p["pid"], p["binary"])]
    for p in live:
        _signal(p["pid"], signal.SIGTERM)
    deadline = time.monotonic() + grace
    while live and time.monotonic() < deadline:
        time.sleep(0.05)
        live = [p for p in live if netns.running(p["pid"])]
    for p in live:
        _signal(p["pid"], signal.SIGKILL)
    for p in live:  # reap-free wait: they are not our children
        end = time.monotonic() + 2.0
        while netns.running(p["pid"]) and time.monotonic() < end:
            time.sleep(0.02)


def stop(pfx: str, grace: float = 5.0) -> int:
    """Agents first (their last uploads reach a live analyzer), then the
    analyzer. Idempotent; returns how many processes were still running."""
    procs = _load(pfx)
    live = sum(1 for p in procs if _ours(p["pid"], p["binary"]))
    _terminate([p for p in procs if p["name"] != "analyzer"], grace)
    _terminate([p for p in procs if p["name"] == "analyzer"], grace)
    cpu_cgroup.unexpose(pfx)
    with contextlib.suppress(FileNotFoundError):
        os.remove(os.path.join(state.state_dir(pfx), PROCESSES_FILE))
    return live


def cmd_start(args: argparse.Namespace) -> int:
    netns.require_root()
    pfx = state.prefix()
    t0 = time.monotonic()
    procs = start(pfx, args.window, args.grace, args.build, args.log_level, args.timeout,
                  args.agent_ports, args.no_inventory, args.inventory, args.no_agent)
    sdir = state.state_dir(pfx)
    agents = len(procs) - 1
    print(f"fabric start: analyzer and {agents} agents answering in "
          f"{time.monotonic() - t0:.1f} s (logs, configs, data in {sdir})")
    print(f"analyzer API: {API_URL} (gRPC {L.ANALYZER_IP}:{L.ANALYZER_GRPC_PORT}) in "
          f"namespace {L.namespace(L.MGMT_DEVICE, pfx)}")
    print(f"  fabric exec mgmt -- curl -s {API_URL}status")
    print(f"  from a browser: fabric forward  (then http://127.0.0.1:{L.ANALYZER_HTTP_PORT}"
          "/api/v1/status)")
    print("stop with: fabric stop")
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    netns.require_root()
    pfx = state.prefix()
    n = stop(pfx, args.grace)
    print(f"fabric stop: stopped {n} process(es) of fabric {pfx!r}" if n
          else f"fabric stop: nothing running for fabric {pfx!r}")
    return 0
