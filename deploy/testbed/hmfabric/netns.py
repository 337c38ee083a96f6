"""Network namespaces: batched `ip` calls, sysctls, processes. The only module
of the testbed that talks to the kernel (besides `fabric exec`)."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Iterator

NETNS_DIR = "/run/netns"  # where `ip netns add` pins namespaces
CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


class NetnsError(RuntimeError):
    """An `ip` command or a namespace operation failed."""


def require_root() -> None:
    if os.geteuid() != 0:
        raise NetnsError("needs root (network namespaces); run it with sudo")


def ip_batch(commands: Iterable[str], ns: str | None = None, force: bool = False) -> None:
    """Runs `ip [-n NS] -batch -`: one process for many commands. With `force`
    it goes on past failing lines (and still reports them)."""
    argv = ["ip"] + (["-n", ns] if ns else []) + (["-force"] if force else []) + ["-batch", "-"]
    proc = subprocess.run(argv, input="\n".join(commands) + "\n", text=True,
                          capture_output=True, check=False)
    if proc.returncode != 0:
        where = f" in {ns}" if ns else ""
        raise NetnsError(f"ip -batch{where} failed: {proc.stderr.strip()}")


def ip_batches(per_ns: dict[str, list[str]], jobs: int = 8) -> None:
    """One `ip -n NS -batch` per namespace, `jobs` at a time."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(ip_batch, cmds, ns) for ns, cmds in per_ns.items()]
        for future in futures:
            future.result()


def ip_json(ns: str, *args: str) -> list | dict:
    proc = subprocess.run(["ip", "-n", ns, "-j", *args], text=True, capture_output=True,
                          check=False)
    if proc.returncode != 0:
        raise NetnsError(f"ip -n {ns} {' '.join(args)}: {proc.stderr.strip()}")
    return json.loads(proc.stdout or "[]")


def list_namespaces() -> list[str]:
    proc = subprocess.run(["ip", "netns", "list"], text=True, capture_output=True, check=False)
    if proc.returncode != 0:
        raise NetnsError(f"ip netns list: {proc.stderr.strip()}")
    return [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]


def _setns(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise NetnsError(f"setns({path}): {os.strerror(err)}")
    finally:
        os.close(fd)


@contextlib.contextmanager
def entered(ns: str) -> Iterator[None]:
    """Moves the calling thread into namespace `ns` for the block. Sockets made
    inside stay in `ns` afterwards, and /proc/sys/net shows `ns`'s values, so
    neither needs a process per namespace."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        _setns(os.path.join(NETNS_DIR, ns))
        try:
            yield
        finally:
            if _libc.setns(home, CLONE_NEWNET) != 0:
                raise NetnsError("could not return to the original network namespace")
    finally:
        os.close(home)


def set_sysctls(ns: str, values: dict[str, str]) -> None:
    """Writes net.* sysctls (dotted keys) inside `ns`."""
    with entered(ns):
        for key, value in values.items():
            path = "/proc/sys/" + key.replace(".", "/")
            try:
                with open(path, "w") as f:
                    f.write(str(value))
            except OSError as exc:
                raise NetnsError(f"sysctl {key}={value} in {ns}: {exc.strerror}") from exc


def read_sysctl(ns: str, key: str) -> str:
    with entered(ns), open("/proc/sys/" + key.replace(".", "/")) as f:
        return f.read().strip()


def pids_in(namespaces: Iterable[str]) -> dict[int, str]:
    """Processes whose network namespace is one of `namespaces` (what
    `ip netns pids` does, in one pass over /proc for all of them)."""
    wanted = {}
    for ns in namespaces:
        with contextlib.suppress(OSError):
            st = os.stat(os.path.join(NETNS_DIR, ns))
            wanted[(st.st_dev, st.st_ino)] = ns
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            st = os.stat(f"/proc/{entry}/ns/net")
            if (st.st_dev, st.st_ino) in wanted:
                found[int(entry)] = wanted[(st.st_dev, st.st_ino)]
    return found


def kill(pids: Iterable[int], grace: float = 1.0) -> None:
    """SIGTERM, then SIGKILL for whatever still runs after `grace` seconds."""
    alive = set(pids)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in list(alive):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                alive.discard(pid)
        deadline = time.monotonic() + grace
        while alive and time.monotonic() < deadline:
            alive = {p for p in alive if running(p)}
            time.sleep(0.02)
        if not alive:
            return


def running(pid: int) -> bool:
    """Exists and is not a zombie (a zombie has left its namespaces already)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def route_get(ns: str, dst: str, src: str, iif: str | None, sport: int, dport: int) -> dict:
    """`ip route get` of a UDP 5-tuple: the kernel's own forwarding decision."""
    args = ["route", "get", dst, "from", src]
    if iif:
        args += ["iif", iif]
    args += ["ipproto", "udp", "sport", str(sport), "dport", str(dport)]
    routes = ip_json(ns, *args)
    if not routes:
        raise NetnsError(f"no route in {ns} for {src} -> {dst}")
    return routes[0]
