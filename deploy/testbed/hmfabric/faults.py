"""`fabric fault add|list|clear`: break the emulated fabric on purpose, and say
exactly what was broken (the ground truth a localization test scores against).

Each fault becomes a list of steps (fault_ops) kept in
/run/hostmesh-fabric/<prefix>/faults.json, so `clear` undoes precisely what
`add` did, and `fabric down` stops every process a fault started (teardown).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from typing import Callable, Iterator

from . import cpu_cgroup
from . import fault_ops as ops
from . import fault_workers
from . import layout as L
from . import netns, start_cmd, state

TESTBED_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(os.path.dirname(TESTBED_DIR))
BUILD_DIR_ENV = "HOSTMESH_BUILD_DIR"
DELAYQ = os.path.join("deploy", "testbed", "hostmesh-delayq")

# Chains run after iptables' mangle (-150), so a delayed packet meets the drop
# rules when it is released; prerouting sinks go first of all.
EGRESS_PRIORITY = 0
SINK_PRIORITY = -300
BLAST_OVERLOAD = 1.5  # the generator offers this multiple of the shaped rate
MAX_CONGESTION_BPS = 200_000_000  # what the Python generator sustains here
CPU_PERIOD_US = 100_000  # the cpu fault's quota period (the kernel's default)

HELP_EPILOG = """\
Links are named as in `fabric topology` (h003.nic1-p0r1, p0r1-s03); --from
DEVICE (h003, p0r1, s03) limits a fault to the egress of that end, default both
directions. Every fault gets an id (f1, f2, ...); `fault list` prints what is
injected where and since when, `fault clear [ID]` undoes it exactly, and
`fabric down` stops every process a fault started.

The fabric routes statically, so nothing reconverges: after link-down a switch
skips only nexthops through its own down port, and the far side keeps sending
into the dead link (as a fabric does until its routing protocol notices): the
spine, which lost its route, answers network unreachable. After nic-down the
rail switch ignores its route over the port without carrier and sends the
NIC's packets up to a spine, where they loop until the TTL runs out. delay needs
hostmesh-delayq built (HOSTMESH_BUILD_DIR, default <repo>/build); congestion
offers 1.5x RATE of background UDP, so the shaper's queue stays full.

cpu gives the host a machine of its own: a CPU cgroup (v2 cpu.max, or v1
cpu.cfs_quota_us) allowed --cpus CPUs, holding the host's agent (from `fabric
start`; inject after it) and stress-ng's workers, which keep that budget used
up. So that agent is starved and nothing else on this machine is. `clear`
moves the agent back to its own cgroup and removes the cgroup. A starved agent
shows in its processing delay only when replies arrive while it sleeps, as on
hardware; on bare veths they arrive inside its own send call, so add
wire-delay first (every spine holds every packet --ms, 0.2 by default; it
takes the delay slot of every spine port, so a delay fault then goes --from
the rail switch end)."""


# --- state ------------------------------------------------------------------

def _path(pfx: str, name: str) -> str:
    return os.path.join(state.state_dir(pfx), name)


@contextlib.contextmanager
def _locked(pfx: str) -> Iterator[dict]:
    """faults.json, read and written under an exclusive lock, so two commands at
    once neither lose a fault nor hand out one id twice."""
    os.makedirs(state.state_dir(pfx), exist_ok=True)
    with open(_path(pfx, "faults.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(_path(pfx, "faults.json")) as f:
                data = json.load(f)
        except FileNotFoundError:
            data = {"next_id": 1, "faults": []}
        before = json.dumps(data, sort_keys=True)
        yield data
        if json.dumps(data, sort_keys=True) != before:
            tmp = _path(pfx, "faults.json.tmp")
            with open(tmp, "w") as f:
                json.dump(data, f, indent=2)
                f.write("\n")
            os.replace(tmp, _path(pfx, "faults.json"))


def _load(pfx: str) -> list[dict]:
    try:
        with open(_path(pfx, "faults.json")) as f:
            return json.load(f)["faults"]
    except FileNotFoundError:
        return []


# --- argument types ---------------------------------------------------------

def _ranged(kind: Callable, lo: float, hi: float, what: str, lo_open: bool = False):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what}: {text!r} is not a number") from None
        if value < lo or value > hi or (lo_open and value == lo):
            bound = f"({lo}, {hi}]" if lo_open else f"[{lo}, {hi}]"
            raise argparse.ArgumentTypeError(f"{what} must be in {bound}, got {text}")
        return value
    return parse


_RATE = re.compile(r"(\d+(?:\.\d+)?)\s*(bit|kbit|mbit|gbit|k|m|g)?", re.IGNORECASE)
_RATE_UNITS = {None: 1, "bit": 1, "k": 1e3, "kbit": 1e3, "m": 1e6, "mbit": 1e6, "g": 1e9,
               "gbit": 1e9}


def _rate(text: str) -> int:
    """tc-style bit rates: 500kbit, 10mbit, 1gbit (not tc's 'bps', which means bytes)."""
    match = _RATE.fullmatch(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"rate {text!r}: use a bit rate like 500kbit or 10mbit")
    bps = int(float(match[1]) * _RATE_UNITS[(match[2] or "bit").lower()])
    if not 64_000 <= bps <= MAX_CONGESTION_BPS:
        raise argparse.ArgumentTypeError(
            f"rate {text} is outside 64kbit..{MAX_CONGESTION_BPS // 1_000_000}mbit (the "
            "background generator must be able to exceed it)")
    return bps


# --- command line -----------------------------------------------------------

def register(sub: argparse._SubParsersAction) -> None:
    fault = sub.add_parser("fault", help="inject, list and clear faults",
                           description="Inject, list and clear faults.", epilog=HELP_EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = fault.add_subparsers(dest="action", required=True, metavar="ACTION")

    add = actions.add_parser("add", help="inject a fault; prints its id", epilog=HELP_EPILOG,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
    kinds = add.add_subparsers(dest="kind", required=True, metavar="KIND")
    for name, (helptext, flags, _) in KINDS.items():
        p = kinds.add_parser(name, help=helptext, description=helptext, epilog=HELP_EPILOG,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
        flags(p)
        p.set_defaults(func=cmd_add)

    p = actions.add_parser("list", help="print the injected faults as JSON (ground truth)")
    p.add_argument("--counters", action="store_true",
                   help="also the packets each fault's nftables rules matched so far")
    p.set_defaults(func=cmd_list)

    p = actions.add_parser("clear", help="remove one fault, or all, restoring the fabric")
    p.add_argument("id", nargs="?", metavar="ID", help="e.g. f3 (default: every fault)")
    p.set_defaults(func=cmd_clear)


def _link_flags(p: argparse.ArgumentParser, directional: bool = True) -> None:
    p.add_argument("--link", required=True, help="e.g. h003.nic1-p0r1 or p0r1-s03")
    if directional:
        p.add_argument("--from", dest="from_device", metavar="DEVICE",
                       help="only the egress of this end of the link (default: both)")


def _nic_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", required=True, help="e.g. h003")
    p.add_argument("--nic", required=True, help="e.g. nic1")


def _flags_loss(p):
    _link_flags(p)
    p.add_argument("--percent", required=True, type=_ranged(float, 0, 100, "--percent", True),
                   help="share of IPv4 packets dropped, (0, 100], resolution 0.01")


def _flags_switch_loss(p):
    p.add_argument("--switch", required=True, help="e.g. s01 (a spine) or p0r1 (a rail switch)")
    p.add_argument("--percent", required=True, type=_ranged(float, 0, 100, "--percent", True),
                   help="share of the IPv4 packets it forwards that are dropped, (0, 100], "
                        "resolution 0.01")


def _flags_blackhole(p):
    _link_flags(p)
    p.add_argument("--sport", required=True, type=_ranged(int, 1, 65535, "--sport"),
                   help="UDP source port whose packets vanish")
    p.add_argument("--dport", type=_ranged(int, 1, 65535, "--dport"),
                   default=L.PROBE_DST_PORT, help=f"UDP destination port ({L.PROBE_DST_PORT})")


def _flags_delay(p):
    _link_flags(p)
    p.add_argument("--ms", required=True, type=_ranged(float, 0, 10000, "--ms", True),
                   help="milliseconds added to every packet")


def _flags_wire_delay(p):
    p.add_argument("--ms", type=_ranged(float, 0.001, 100, "--ms", True), default=0.2,
                   help="milliseconds every spine holds every packet (0.2)")


def _flags_congestion(p):
    _link_flags(p)
    p.add_argument("--rate", required=True, type=_rate, help="shaped rate, e.g. 10mbit")
    p.add_argument("--queue-ms", type=_ranged(int, 1, 1000, "--queue-ms"), default=20,
                   help="longest queue of the shaper, in ms at RATE (20)")


def _flags_flap(p):
    _nic_flags(p)
    p.add_argument("--period", required=True, type=_ranged(float, 0.05, 3600, "--period"),
                   help="seconds between state changes")


def _flags_cpu(p):
    p.add_argument("--host", required=True, help="e.g. h003")
    p.add_argument("--cpus", type=_ranged(float, 0.01, 1024, "--cpus"), default=0.1,
                   help="CPU time the host (its agent and the load) gets, in CPUs: a "
                        f"quota of CPUS x {CPU_PERIOD_US} us per {CPU_PERIOD_US} us (0.1)")
    p.add_argument("--workers", type=_ranged(int, 1, 1024, "--workers"),
                   default=os.cpu_count() or 1,
                   help="stress-ng CPU workers (default one per CPU of this machine)")
    p.add_argument("--load", type=_ranged(int, 1, 100, "--load"), default=100,
                   help="percent busy of each worker (100)")


# --- planning: what each kind does, as steps --------------------------------

class Plan:
    """A fault being built: its targets (ground truth) and its steps."""

    def __init__(self, lay: L.Layout, fid: str):
        self.lay, self.fid = lay, fid
        self.targets: list[dict] = []
        self.steps: list[dict] = []

    def target(self, link: L.Link | None, end: L.Endpoint | None, role: str,
               device: str | None = None) -> None:
        entry = {"role": role, "device": device or L.device_of(end),
                 "namespace": end.namespace if end else L.namespace(device, self.lay.prefix)}
        if end:
            entry.update(ifname=end.ifname, ip=end.ip, link=link.name)
        self.targets.append(entry)

    def nft(self, ns: str, suffix: str, hook: str, priority: int, rules: list[str]) -> None:
        comment = f' comment "hostmesh fault {self.fid}"'
        self.steps.append({"op": "nft", "ns": ns, "chain": f"{self.fid}_{suffix}", "hook": hook,
                           "priority": priority, "rules": [r + comment for r in rules]})

    def process(self, role: str, ns: str | None, argv: list[str], ready: bool) -> None:
        n = len(self.steps)
        log = _path(self.lay.prefix, f"{self.fid}-{n}-{role}.log")
        self.steps.append({"op": "process", "role": role, "ns": ns, "argv": argv, "ready": ready,
                           "owner": f"{self.lay.prefix}/{self.fid}/{n}", "log": log})


def _egress_ends(lay: L.Layout, args) -> tuple[L.Link, list[L.Endpoint]]:
    link = lay.link(args.link)
    if getattr(args, "from_device", None):
        return link, [link.side(args.from_device)]
    return link, [link.a, link.b]


def _other(link: L.Link, end: L.Endpoint) -> L.Endpoint:
    return link.b if end == link.a else link.a


def _drop_on_egress(plan: Plan, args, match: str) -> None:
    link, ends = _egress_ends(plan.lay, args)
    for end in ends:
        plan.target(link, end, "egress")
        if link.kind == "nic" and end == link.a:
            # What the host sends: dropped on the wire, as the rail switch
            # receives it. A drop in the host's own postrouting would fail the
            # agent's send (EPERM), a send failure, not a loss on the cable.
            far = _other(link, end)
            plan.nft(far.namespace, "wire", "prerouting", EGRESS_PRIORITY,
                     [f'iifname "{far.ifname}" {match} counter drop'])
            continue
        plan.nft(end.namespace, "egress", "postrouting", EGRESS_PRIORITY,
                 [f'oifname "{end.ifname}" {match} counter drop'])


def plan_loss(plan: Plan, args) -> None:
    # numgen draws per packet; in 1/10000 so fractional percents work.
    _drop_on_egress(plan, args, f"meta nfproto ipv4 numgen random mod 10000 < "
                                f"{round(args.percent * 100)}")


def plan_switch_loss(plan: Plan, args) -> None:
    """A switch that loses packets on every path through it (a bad ASIC, a
    buffer fault): a share of what it forwards, whichever ports; what it sends
    itself (ICMP answers to traceroute, its control plane) goes out intact."""
    switches = plan.lay.rail_switches + plan.lay.spines
    if args.switch not in switches:
        raise ops.FaultError(f"--switch {args.switch!r}: the switches are "
                             f"{', '.join(switches)}")
    plan.target(None, None, "forward", device=args.switch)
    plan.nft(plan.lay.ns(args.switch), "forward", "forward", EGRESS_PRIORITY,
             [f"meta nfproto ipv4 numgen random mod 10000 < {round(args.percent * 100)} "
              "counter drop"])


def plan_gray(plan: Plan, args) -> None:
    _drop_on_egress(plan, args, "meta nfproto ipv4")


def plan_blackhole(plan: Plan, args) -> None:
    _drop_on_egress(plan, args, f"udp sport {args.sport} udp dport {args.dport}")


def plan_link_down(plan: Plan, args) -> None:
    link = plan.lay.link(args.link)
    for end in (link.a, link.b):
        plan.target(link, end, "down")
        plan.steps.append({"op": "link", "ns": end.namespace, "ifname": end.ifname,
                           "down": True})


def _nic_end(lay: L.Layout, args) -> tuple[L.Link, L.Endpoint]:
    h = lay.host_index(args.host)
    match = re.fullmatch(r"nic(\d+)", args.nic)
    if not match or int(match[1]) >= lay.size.rails:
        raise ops.FaultError(f"--nic {args.nic!r}: {args.host} has nic0..nic{lay.size.rails - 1}")
    link = lay.nic_link(h, int(match[1]))
    return link, link.a


def plan_nic_down(plan: Plan, args) -> None:
    link, end = _nic_end(plan.lay, args)
    plan.target(link, end, "down")
    plan.steps.append({"op": "link", "ns": end.namespace, "ifname": end.ifname, "down": True})


def plan_nic_flap(plan: Plan, args) -> None:
    link, end = _nic_end(plan.lay, args)
    plan.target(link, end, "flapping")
    # The link step only remembers the routes, so clear brings the NIC up intact.
    plan.steps.append({"op": "link", "ns": end.namespace, "ifname": end.ifname, "down": False})
    events = _path(plan.lay.prefix, f"{plan.fid}-flap-events.log")
    plan.process("flap", None, _worker("flap", "--ns", end.namespace, "--ifname", end.ifname,
                                       "--period", str(args.period), "--events", events),
                 ready=True)
    plan.steps[-1]["events"] = events


def plan_delay(plan: Plan, args) -> None:
    binary = _delayq_binary()
    link, ends = _egress_ends(plan.lay, args)
    for end in ends:
        plan.target(link, end, "egress")
        queue = _free_queue(plan, end.namespace)
        # The rule first, so undo stops the program first: it releases what it holds,
        # while removing the hook with packets still queued would drop them. Until the
        # program binds, --queue-bypass lets packets pass undelayed.
        plan.steps.append({"op": "nfqueue", "ns": end.namespace, "ifname": end.ifname,
                           "queue": queue, "fault": plan.fid})
        # Real-time priority, like a hardware delay line: other load on the machine
        # must not stretch the configured delay (chrt execs, so the pid stays).
        plan.process("delayq", end.namespace,
                     _realtime([binary, "--queue", str(queue), "--delay-ms", str(args.ms)]),
                     ready=True)


def plan_wire_delay(plan: Plan, args) -> None:
    """Every probe crosses a spine, so holding every packet at the spines makes
    the whole fabric deliver like hardware: later than the send call returns.
    On bare veths a probe reaches its receiver inside the sender's sendmsg, so
    an agent never sleeps between sending and receiving, and what a busy host
    really costs (the agent waiting for a CPU when the reply wakes it) never
    shows. One queue and one hostmesh-delayq per spine, all its ports."""
    binary = _delayq_binary()
    for spine in plan.lay.spines:
        ns = plan.lay.ns(spine)
        queue = _free_queue(plan, ns)
        for link in plan.lay.fabric_links:
            if link.b.device != spine and link.a.device != spine:
                continue
            end = link.side(spine)
            plan.target(link, end, "egress")
            plan.steps.append({"op": "nfqueue", "ns": ns, "ifname": end.ifname, "queue": queue,
                               "fault": plan.fid})
        plan.process("delayq", ns,
                     _realtime([binary, "--queue", str(queue), "--delay-ms", str(args.ms)]),
                     ready=True)


def plan_congestion(plan: Plan, args) -> None:
    link, ends = _egress_ends(plan.lay, args)
    burst = max(3200, args.rate // 8 // 500)  # >= 2 MTUs and >= 2 ms at rate
    for end in ends:
        far = _other(link, end)
        plan.target(link, end, "egress")
        plan.steps.append({"op": "tbf", "ns": end.namespace, "ifname": end.ifname,
                           "rate_bps": args.rate, "burst_bytes": burst,
                           "queue_ms": args.queue_ms})
        # The far end drops the filler before routing: no ICMP port-unreachable
        # storm back across the link, no socket needed there.
        plan.nft(far.namespace, "sink", "prerouting", SINK_PRIORITY,
                 [f'iifname "{far.ifname}" ip saddr {end.ip} udp dport '
                  f"{fault_workers.BLAST_PORT} counter drop"])
        plan.process("blast", end.namespace,
                     _worker("blast", "--dev", end.ifname, "--src", end.ip, "--dst", far.ip,
                             "--rate-bps", str(int(args.rate * BLAST_OVERLOAD))), ready=True)


def plan_cpu(plan: Plan, args) -> None:
    plan.lay.host_index(args.host)
    binary = shutil.which("stress-ng")
    if not binary:
        raise ops.FaultError("stress-ng is not installed (apt-get install stress-ng)")
    try:
        version, mount = cpu_cgroup.hierarchy()
    except cpu_cgroup.CgroupError as exc:
        raise ops.FaultError(f"cpu: {exc}") from None
    plan.target(None, None, "cpu", device=args.host)
    ns = L.namespace(args.host, plan.lay.prefix)
    name = cpu_cgroup.name_for(plan.lay.prefix, plan.fid)
    quota = max(cpu_cgroup.MIN_QUOTA_US, round(args.cpus * CPU_PERIOD_US))
    # The host's agent(s) first, then the load started inside the cgroup.
    plan.steps.append({"op": "cgroup", "ns": ns, "host": args.host, "version": version,
                       "mount": mount, "name": name, "quota_us": quota,
                       "period_us": CPU_PERIOD_US,
                       "pids": start_cmd.running_pids(plan.lay.prefix, args.host)})
    plan.process("stress-ng", ns, [binary, "--cpu", str(args.workers), "--cpu-load",
                                   str(args.load), "--timeout", "0", "--quiet"], ready=False)
    plan.steps[-1]["cgroup"] = os.path.join(mount, name)


KINDS: dict[str, tuple[str, Callable, Callable]] = {
    "loss": ("drop a share of the IPv4 packets leaving a link end (nftables)",
             _flags_loss, plan_loss),
    "switch-loss": ("drop a share of the IPv4 packets a switch forwards, on every port "
                    "(nftables forward hook)", _flags_switch_loss, plan_switch_loss),
    "gray": ("drop every IPv4 packet, link stays up (gray failure)",
             lambda p: _link_flags(p), plan_gray),
    "link-down": ("set both ends of a link down", lambda p: _link_flags(p, False),
                  plan_link_down),
    "nic-down": ("set one host NIC down", _nic_flags, plan_nic_down),
    "nic-flap": ("toggle one host NIC down/up every PERIOD seconds", _flags_flap, plan_nic_flap),
    "blackhole": ("drop one UDP source port's packets (a bad ACL)", _flags_blackhole,
                  plan_blackhole),
    "delay": ("hold every packet for MS milliseconds (NFQUEUE + hostmesh-delayq)",
              _flags_delay, plan_delay),
    "wire-delay": ("hold every packet MS ms at every spine: delivery later than the send "
                   "call, as on hardware (for the cpu fault)", _flags_wire_delay,
                   plan_wire_delay),
    "congestion": ("shape a link end to RATE and fill it with background UDP",
                   _flags_congestion, plan_congestion),
    "cpu": ("starve one host of CPU: its agent and stress-ng in a cgroup with a quota",
            _flags_cpu, plan_cpu),
}


def _worker(*args: str) -> list[str]:
    # -P: the worker's cwd must not shadow the package; hmfabric comes from PYTHONPATH.
    return ["env", f"PYTHONPATH={TESTBED_DIR}", sys.executable, "-P", "-m",
            "hmfabric.fault_workers", *args]


def _realtime(argv: list[str]) -> list[str]:
    """SCHED_FIFO when this machine allows it (some containers do not)."""
    ok = subprocess.run(["chrt", "-f", "10", "true"], capture_output=True, check=False)
    return ["chrt", "-f", "10", *argv] if ok.returncode == 0 else argv


def _delayq_binary() -> str:
    build = os.environ.get(BUILD_DIR_ENV) or os.path.join(REPO_DIR, "build")
    path = os.path.join(build, DELAYQ)
    if not os.access(path, os.X_OK):
        raise ops.FaultError(
            f"hostmesh-delayq is not built: no {path} (build it with `cmake --build {build} "
            f"--target hostmesh-delayq`, or set {BUILD_DIR_ENV} to your build directory)")
    return path


def _free_queue(plan: Plan, ns: str) -> int:
    """The lowest NFQUEUE number no fault uses in `ns` (queues are per namespace)."""
    used = {s["queue"] for f in _load(plan.lay.prefix) + [{"steps": plan.steps}]
            for s in f["steps"] if s["op"] == "nfqueue" and s["ns"] == ns}
    return min(set(range(1, len(used) + 2)) - used)


# --- conflicts --------------------------------------------------------------

# What a step occupies on an interface; two faults may not hold the same.
def _claims(step: dict) -> set[tuple]:
    if step["op"] == "link":
        return {("link state", step["ns"], step["ifname"])}
    if step["op"] == "tbf":
        return {("root qdisc", step["ns"], step["ifname"])}
    if step["op"] == "nfqueue":
        return {("delay", step["ns"], step["ifname"])}
    if step["op"] == "cgroup":  # a process lives in one CPU cgroup at a time
        return {("CPU budget", step["ns"], step["host"])}
    return set()


def _check_conflicts(plan: Plan, existing: list[dict]) -> None:
    mine = set().union(*(_claims(s) for s in plan.steps))
    for fault in existing:
        for step in fault["steps"]:
            for claim in _claims(step) & mine:
                what, ns, ifname = claim
                raise ops.FaultError(f"fault {fault['id']} ({fault['kind']}) already holds the "
                                     f"{what} of {ifname} in {ns}: clear it first")


def _check_namespaces(plan: Plan) -> None:
    for ns in {s["ns"] for s in plan.steps if s.get("ns")}:
        if not os.path.exists(os.path.join(netns.NETNS_DIR, ns)):
            raise ops.FaultError(f"namespace {ns} does not exist: the fabric is not fully up "
                                 "(see `fabric status`)")


# --- commands ---------------------------------------------------------------

def cmd_add(args: argparse.Namespace) -> int:
    netns.require_root()
    pfx = state.prefix()
    lay, _ = state.current(pfx)
    with _locked(pfx) as data:
        fid = f"f{data['next_id']}"
        plan = Plan(lay, fid)
        KINDS[args.kind][2](plan, args)
        _check_conflicts(plan, data["faults"])
        _check_namespaces(plan)
        try:
            ops.apply_all(plan.steps)
        except BaseException:
            _tidy(plan.steps, data["faults"])
            raise
        start = time.time()  # in force from now: every program is ready
        data["next_id"] += 1
        data["faults"].append({
            "id": fid, "kind": args.kind, "params": _params(args),
            "targets": plan.targets, "started_unix": round(start, 6),
            "started_iso": datetime.datetime.fromtimestamp(start, datetime.timezone.utc)
            .isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "steps": plan.steps})
    print(fid)
    return 0


def _params(args: argparse.Namespace) -> dict:
    skip = {"command", "action", "kind", "func", "debug"}
    out = {k: v for k, v in vars(args).items() if k not in skip}
    if "from_device" in out:
        out["from"] = out.pop("from_device")
    if "rate" in out:
        out["rate_bps"] = out.pop("rate")
    return out


def public(fault: dict, counters: bool = False) -> dict:
    """A fault as `list` prints it: everything but the undo details."""
    out = {k: v for k, v in fault.items() if k != "steps"}
    out["links"] = sorted({t["link"] for t in fault["targets"] if "link" in t})
    out["namespaces"] = sorted({s["ns"] for s in fault["steps"] if s.get("ns")}
                               | {t["namespace"] for t in fault["targets"]})
    out["touched"] = [ops.describe(s) for s in fault["steps"]]
    out["processes"] = [{"pid": s["pid"], "role": s["role"], "namespace": s["ns"],
                         "alive": ops.alive(s["pid"], s["owner"]), "log": s["log"],
                         **({"events": s["events"]} if "events" in s else {})}
                        for s in fault["steps"] if s["op"] == "process"]
    if counters:
        out["matched_packets"] = {f"{s['ns']}/{s['chain']}": ops.nft_counter(s["ns"], s["chain"])
                                  for s in fault["steps"] if s["op"] == "nft"}
    return out


def cmd_list(args: argparse.Namespace) -> int:
    faults = [public(f, args.counters) for f in _load(state.prefix())]
    print(json.dumps(faults, indent=2))
    return 0


def cmd_clear(args: argparse.Namespace) -> int:
    netns.require_root()
    pfx = state.prefix()
    errors = []
    if not _load(pfx) and not args.id:
        return 0  # nothing injected (or no fabric): leave no state directory behind
    with _locked(pfx) as data:
        if args.id and args.id not in {f["id"] for f in data["faults"]}:
            known = ", ".join(f["id"] for f in data["faults"]) or "none"
            raise ops.FaultError(f"no fault {args.id!r} (injected: {known})")
        # Newest first, so faults stacked on one namespace unwind in order.
        for fault in reversed(list(data["faults"])):
            if args.id in (None, fault["id"]):
                errors += [f"{fault['id']}: {e}" for e in ops.undo_all(fault["steps"])]
                data["faults"].remove(fault)
                errors += [f"{fault['id']}: {e}" for e in _tidy(fault["steps"], data["faults"])]
                print(fault["id"])
    if errors:
        raise ops.FaultError("cleared, but not everything was restored: " + "; ".join(errors))
    return 0


def _tidy(steps: list[dict], remaining: list[dict]) -> list[str]:
    """Tidies the namespaces `steps` touched that no remaining fault touches."""
    busy = {s.get("ns") for f in remaining for s in f["steps"]}
    errors = []
    for ns in sorted({s["ns"] for s in steps if s.get("ns")} - busy):
        try:
            ops.tidy(ns)
        except ops.FaultError as exc:
            errors.append(str(exc))
    return errors


def teardown(prefix: str) -> None:
    """For `fabric down`, before the namespaces go: stop every process any fault
    of this fabric started, remove its CPU cgroups (found by name, so also
    after a crash) and forget the faults. Safe when there are none."""
    ops.kill_owned(lambda owner: owner.split("/", 1)[0] == prefix)
    try:
        cpu_cgroup.remove_all(prefix)
    except cpu_cgroup.CgroupError as exc:
        raise ops.FaultError(str(exc)) from None
    with contextlib.suppress(FileNotFoundError):
        os.remove(_path(prefix, "faults.json"))
