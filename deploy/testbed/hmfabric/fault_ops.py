"""The kernel side of faults: every change a fault makes is one *step*, a plain
dict saying what was done, so the same record both drives `apply` and tells
`undo` how to put the fabric back exactly. Steps:

  nft        a chain of rules in table `inet hmfault` of one namespace, jumped
             to from the table's base chain for its hook
  nfqueue    an iptables-nft NFQUEUE rule (the kernel has no nft `queue`)
  link       an interface set down (or only watched, for nic-flap), with the
             routes through it that the kernel flushes on admin down
  tbf        a token-bucket root qdisc on an interface
  cgroup     a CPU cgroup with a quota, and the processes (a host's agent)
             moved into it from where they were
  process    a detached background program, tagged in its environment (and
             started inside a cgroup when the step names one)

Why postrouting (and not the netdev egress hook): one inet chain there sees
both forwarded (switch) and locally generated (host) IPv4 packets after the
routing decision, so `oifname` picks exactly one link direction; ARP never
enters it, so neighbours stay resolved and a 100% drop is a gray failure, not
a link down; and the NFQUEUE rule that delays packets can only live in the
IP hooks (xtables), so all faults act at the same point of the path.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import time

from . import cpu_cgroup, netns

NFT_TABLE = "hmfault"  # table inet hmfault in every namespace a fault touches
OWNER_ENV = "HOSTMESH_FAULT_OWNER"  # "<prefix>/<fault id>" in every process we start
READY_TIMEOUT = 5.0


class FaultError(RuntimeError):
    """A fault could not be applied or undone."""


def _run(argv: list[str], stdin: str | None = None) -> str:
    proc = subprocess.run(argv, input=stdin, text=True, capture_output=True, check=False)
    if proc.returncode != 0:
        raise FaultError(f"{' '.join(argv)}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def _in_ns(ns: str, *argv: str) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]


# --- nftables ---------------------------------------------------------------

def nft_apply(step: dict) -> None:
    """The fault's rules go in a regular chain of its own, jumped to from one
    shared base chain per hook. Only tidy() ever removes a base chain, because
    unregistering a hook makes the kernel drop every packet NFQUEUE holds in
    that namespace (a delay fault's), and clearing one fault must not do that."""
    base, chain = step["hook"], step["chain"]
    lines = [f"add table inet {NFT_TABLE}",
             f"add chain inet {NFT_TABLE} {base} "
             f"{{ type filter hook {base} priority {step['priority']}; policy accept; }}",
             f"add chain inet {NFT_TABLE} {chain}"]
    lines += [f"add rule inet {NFT_TABLE} {chain} {rule}" for rule in step["rules"]]
    lines.append(f"add rule inet {NFT_TABLE} {base} jump {chain}")
    _run(_in_ns(step["ns"], "nft", "-f", "-"), "\n".join(lines) + "\n")


def nft_undo(step: dict) -> None:
    ns, base, chain = step["ns"], step["hook"], step["chain"]
    items = _nft_items(ns, "chain", "inet", NFT_TABLE, base)
    handles = [item["rule"]["handle"] for item in items if "rule" in item
               and {"jump": {"target": chain}} in item["rule"]["expr"]]
    lines = [f"delete rule inet {NFT_TABLE} {base} handle {h}" for h in handles]
    if any(item.get("chain", {}).get("name") == chain
           for item in _nft_items(ns, "table", "inet", NFT_TABLE)):
        lines += [f"flush chain inet {NFT_TABLE} {chain}",
                  f"delete chain inet {NFT_TABLE} {chain}"]
    if lines:
        _run(_in_ns(ns, "nft", "-f", "-"), "\n".join(lines) + "\n")


def _nft_items(ns: str, *what: str) -> list[dict]:
    """`nft -j list WHAT` in `ns`; empty when it does not exist."""
    proc = subprocess.run(_in_ns(ns, "nft", "-j", "list", *what), text=True,
                          capture_output=True, check=False)
    if proc.returncode != 0:
        return []
    return [item for item in json.loads(proc.stdout)["nftables"] if "metainfo" not in item]


def tidy(ns: str) -> None:
    """Once no fault touches `ns`: removes our table and the `ip mangle` table
    iptables-nft left for NFQUEUE rules, when they hold no rules (the fabric
    has neither), so the namespace is exactly as `fabric up` made it."""
    for family, table in (("inet", NFT_TABLE), ("ip", "mangle")):
        items = _nft_items(ns, "table", family, table)
        if items and not any("rule" in item for item in items):
            _run(_in_ns(ns, "nft", "delete", "table", family, table))


def nft_counter(ns: str, chain: str) -> int:
    """Packets matched so far by the counters of one fault chain."""
    proc = subprocess.run(_in_ns(ns, "nft", "-j", "list", "chain", "inet", NFT_TABLE, chain),
                          text=True, capture_output=True, check=False)
    if proc.returncode != 0:
        return 0
    total = 0
    for item in json.loads(proc.stdout)["nftables"]:
        for expr in item.get("rule", {}).get("expr", []):
            if "counter" in expr:
                total += expr["counter"]["packets"]
    return total


# --- NFQUEUE (xtables through nf_tables compat) --------------------------------

def _nfqueue_spec(step: dict) -> list[str]:
    return ["POSTROUTING", "-o", step["ifname"], "-m", "comment", "--comment",
            f"hostmesh fault {step['fault']}", "-j", "NFQUEUE", "--queue-num",
            str(step["queue"]), "--queue-bypass"]


def nfqueue_apply(step: dict) -> None:
    # This kernel lacks nft's `queue` expression (CONFIG_NFT_QUEUE) but has the
    # xtables NFQUEUE target, which iptables-nft reaches through nft_compat.
    # --queue-bypass: if hostmesh-delayq dies, packets pass instead of vanishing.
    _run(_in_ns(step["ns"], "iptables", "-w", "-t", "mangle", "-A", *_nfqueue_spec(step)))


def nfqueue_undo(step: dict) -> None:
    with contextlib.suppress(FaultError):  # already gone: fine
        _run(_in_ns(step["ns"], "iptables", "-w", "-t", "mangle", "-D", *_nfqueue_spec(step)))


# --- links and routes -------------------------------------------------------

def link_set(ns: str, ifname: str, up: bool) -> None:
    _run(["ip", "-n", ns, "link", "set", ifname, "up" if up else "down"])


def routes_through(ns: str, ifname: str) -> list[dict]:
    """Static routes that use `ifname`: what an admin down flushes for good (the
    kernel re-adds only its own connected routes when the link comes back)."""
    out = []
    for route in netns.ip_json(ns, "route", "show", "table", "all"):
        if route.get("table") == "local" or route.get("protocol") == "kernel":
            continue
        if ifname in _route_devs(route):
            out.append(route)
    return out


def _route_devs(route: dict) -> set[str]:
    devs = {nh.get("dev") for nh in route.get("nexthops", [])}
    return {d for d in devs | {route.get("dev")} if d}


def _route_key(route: dict) -> tuple:
    return (route.get("table", "main"), route.get("dst"), route.get("metric"),
            route.get("tos"), route.get("type", "unicast"))


def _route_args(route: dict) -> list[str]:
    """`ip route add` arguments that recreate a route of `ip -j route show`."""
    args = [] if route.get("type", "unicast") == "unicast" else [route["type"]]
    args.append(route["dst"])
    hops = route.get("nexthops") or [route]
    for hop in hops:
        if "nexthops" in route:
            args.append("nexthop")
        if hop.get("gateway"):
            args += ["via", hop["gateway"]]
        if hop.get("dev"):
            args += ["dev", hop["dev"]]
        if "nexthops" in route and hop.get("weight"):
            args += ["weight", str(hop["weight"])]
        if "onlink" in hop.get("flags", []):
            args.append("onlink")
    for key, flag in (("table", "table"), ("protocol", "proto"), ("scope", "scope"),
                      ("prefsrc", "src"), ("metric", "metric"), ("tos", "tos")):
        if key in route and not (key == "table" and route[key] == "main"):
            args += [flag, str(route[key])]
    return args


def restore_routes(ns: str, snapshot: list[dict]) -> None:
    """Adds back every route of `snapshot` that is missing. A route through a
    device that is still down (held by another fault) is left to that fault's
    own restore: the kernel refuses it now."""
    present = {_route_key(r) for r in netns.ip_json(ns, "route", "show", "table", "all")}
    up = {link["ifname"] for link in netns.ip_json(ns, "link", "show")
          if "UP" in link.get("flags", [])}
    for route in snapshot:
        if _route_key(route) in present or not _route_devs(route) <= up:
            continue
        _run(["ip", "-n", ns, "route", "add", *_route_args(route)])


def link_apply(step: dict) -> None:
    step["routes"] = routes_through(step["ns"], step["ifname"])
    if step["down"]:
        link_set(step["ns"], step["ifname"], up=False)


def link_undo(step: dict) -> None:
    link_set(step["ns"], step["ifname"], up=True)
    restore_routes(step["ns"], step.get("routes", []))


# --- qdisc ------------------------------------------------------------------

def tbf_apply(step: dict) -> None:
    _run(["tc", "-n", step["ns"], "qdisc", "add", "dev", step["ifname"], "root", "tbf",
          "rate", f"{step['rate_bps']}bit", "burst", str(step["burst_bytes"]),
          "latency", f"{step['queue_ms']}ms"])


def tbf_undo(step: dict) -> None:
    # Deleting the root qdisc gives the veth back its default (noqueue).
    with contextlib.suppress(FaultError):
        _run(["tc", "-n", step["ns"], "qdisc", "del", "dev", step["ifname"], "root"])


# --- CPU cgroups -------------------------------------------------------------

def cgroup_apply(step: dict) -> None:
    """Creates the cgroup, then moves each process of `pids` into it, noting
    where it came from (so undo puts it back there, not merely at the root)."""
    version, mount = step["version"], step["mount"]
    try:
        step["path"] = cpu_cgroup.create(version, mount, step["name"], step["quota_us"],
                                         step["period_us"])
        step["moved"] = []
        for pid in step["pids"]:
            origin = cpu_cgroup.cgroup_of(pid, version)
            if origin is not None and cpu_cgroup.move(pid, mount, step["path"]):
                step["moved"].append({"pid": pid, "from": origin})
    except cpu_cgroup.CgroupError as exc:
        if step.get("path"):
            cgroup_undo(step)
        raise FaultError(str(exc)) from None


def cgroup_undo(step: dict) -> None:
    mount, rel = step["mount"], step.get("path")
    if not rel:
        return
    try:
        still = set(cpu_cgroup.members(mount, rel))
        for entry in step.get("moved", []):
            if entry["pid"] in still:  # not exited (nor a reused pid elsewhere)
                home = entry["from"] if os.path.isdir(mount + entry["from"]) else "/"
                cpu_cgroup.move(entry["pid"], mount, home)
        cpu_cgroup.remove(mount, rel)
    except cpu_cgroup.CgroupError as exc:
        raise FaultError(str(exc)) from None


# --- background processes ---------------------------------------------------

def process_apply(step: dict) -> None:
    """Starts the program detached (own session, no terminal, stdio to a log) so
    it outlives this command. With `ready`, waits for its first stdout line:
    the fault is only in force once the program has bound its queue/socket."""
    env = dict(os.environ, **{OWNER_ENV: step["owner"]})
    argv = (_in_ns(step["ns"]) if step.get("ns") else []) + step["argv"]
    # Into the cgroup before exec, so every process it forks starts there too.
    # (Not from inside: `ip netns exec` remounts /sys, hiding the cgroup tree.)
    procs = os.path.join(step["cgroup"], "cgroup.procs") if step.get("cgroup") else None
    enter = (lambda: _write_pid(procs)) if procs else None
    with open(step["log"], "ab") as log:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE if step["ready"] else log,
                                    stderr=log, env=env, start_new_session=True, close_fds=True,
                                    preexec_fn=enter)
        except subprocess.SubprocessError as exc:  # the cgroup refused it
            raise FaultError(f"{step['role']}: could not start in {procs}: {exc}") from None
    step["pid"] = proc.pid
    if step["ready"]:
        _await_ready(proc, step)
    else:
        time.sleep(0.2)  # a program that cannot start fails at once
        if proc.poll() is not None:
            raise FaultError(f"{step['role']} exited at once ({proc.returncode}): "
                             f"{_tail(step['log'])}")


def _write_pid(procs: str) -> None:
    with open(procs, "w") as f:
        f.write(str(os.getpid()))


def _await_ready(proc: subprocess.Popen, step: dict) -> None:
    readable = select.select([proc.stdout], [], [], READY_TIMEOUT)[0]
    line = proc.stdout.readline() if readable else b""
    proc.stdout.close()  # it writes nothing more to stdout
    if line.startswith(b"ready"):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    raise FaultError(f"{step['role']} did not start within {READY_TIMEOUT:.0f} s: "
                     f"{_tail(step['log'])}")


def _tail(path: str) -> str:
    with contextlib.suppress(OSError), open(path, errors="replace") as f:
        return " | ".join(f.read().strip().splitlines()[-3:]) or "(no output)"
    return "(no log)"


def owner_of(pid: int) -> str | None:
    """The fault that started process `pid`, from its environment (so a pid the
    kernel has since reused for something else is never killed)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        return None
    key = OWNER_ENV.encode() + b"="
    for item in env:
        if item.startswith(key):
            return item[len(key):].decode(errors="replace")
    return None


def alive(pid: int, owner: str) -> bool:
    return owner_of(pid) == owner and netns.running(pid)


def kill_owned(match) -> None:
    """SIGTERM (then SIGKILL) every process whose owner tag satisfies `match`:
    the programs we started and whatever they forked (stress-ng's workers)."""
    pids = [int(e) for e in os.listdir("/proc") if e.isdigit()]
    netns.kill([pid for pid in pids if (owner := owner_of(pid)) and match(owner)], grace=2.0)


def process_undo(step: dict) -> None:
    kill_owned(lambda owner: owner == step["owner"])


# --- dispatch ---------------------------------------------------------------

_OPS = {
    "nft": (nft_apply, nft_undo),
    "nfqueue": (nfqueue_apply, nfqueue_undo),
    "link": (link_apply, link_undo),
    "tbf": (tbf_apply, tbf_undo),
    "cgroup": (cgroup_apply, cgroup_undo),
    "process": (process_apply, process_undo),
}


def apply_all(steps: list[dict]) -> None:
    """Applies steps in order; on failure undoes those done and re-raises."""
    done: list[dict] = []
    try:
        for step in steps:
            _OPS[step["op"]][0](step)
            done.append(step)
    except BaseException:
        undo_all(done)
        raise


def undo_all(steps: list[dict]) -> list[str]:
    """Undoes steps in reverse order, going on past failures; returns them."""
    errors = []
    for step in reversed(steps):
        try:
            _OPS[step["op"]][1](step)
        except Exception as exc:  # keep restoring the rest
            errors.append(str(exc))
    return errors


def describe(step: dict) -> dict:
    """What a step touched, for the ground truth `fault list` prints."""
    op, ns = step["op"], step.get("ns")
    what = {
        "nft": lambda: f"nft chain inet {NFT_TABLE} {step['chain']} (from {step['hook']})",
        "nfqueue": lambda: f"iptables mangle POSTROUTING -o {step['ifname']} "
                           f"NFQUEUE {step['queue']}",
        "link": lambda: f"link {step['ifname']} " + ("down" if step["down"] else "flapping"),
        "tbf": lambda: f"tbf qdisc on {step['ifname']} rate {step['rate_bps']}bit",
        "cgroup": lambda: f"cgroup {step['mount']}{step.get('path', '/' + step['name'])} "
                          f"({step['quota_us']} us of CPU per {step['period_us']} us), moved in: "
                          + (" ".join(str(m["pid"]) for m in step.get("moved", [])) or "none"),
        "process": lambda: f"process {step.get('pid')} {step['role']}",
    }[op]()
    out = {"namespace": ns, "what": what}
    if op in ("nfqueue", "link", "tbf"):
        out["ifname"] = step["ifname"]
    return out
