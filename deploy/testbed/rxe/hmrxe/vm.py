"""One soft-RoCE VM per fabric host: the host's namespace keeps its veths to the
rail switches and its management port, each bridged to a tap of the VM, so the
VM's NICs sit where the namespace's were (same addresses, same rail switch).
QEMU runs inside the host namespace, so `fabric down` ends it with the rest."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time

from hmfabric import layout as L
from hmfabric import state

from . import initramfs

QEMU = "qemu-system-x86_64"
VM_DIR = "rxe"  # under the fabric's state directory
GUEST_SHELL_PORT = 2323


class VmError(RuntimeError):
    pass


def vm_dir(pfx: str) -> str:
    return os.path.join(state.state_dir(pfx), VM_DIR)


def mac(h: int, port: int) -> str:
    return f"52:54:00:{h >> 8 & 0xff:02x}:{h & 0xff:02x}:{port:02x}"


def requirements() -> str | None:
    """Why a VM cannot boot on this machine, or None."""
    if shutil.which(QEMU) is None:
        return f"{QEMU} not installed (apt-get install qemu-system-x86)"
    try:
        initramfs.kernel_version()
    except initramfs.Missing as e:
        return str(e)
    if not os.path.exists("/dev/net/tun"):
        return "/dev/net/tun is missing (no tap devices)"
    return None


def vm_conf(lay: L.Layout, h: int, agent: bool) -> str:
    nics = []
    for r in range(lay.size.rails):
        link = lay.nic_link(h, r)
        nics.append(f"{mac(h, r)} {link.a.ip}/31 {link.b.ip}")
    return (f'NICS="{" ".join(nics)}"\n'
            f'MGMT="{mac(h, 0x80)} {L.mgmt_ip(h)}/{L.MGMT_NET.prefixlen}"\n'
            f"AGENT={1 if agent else 0}\n")


def _netns(ns: str, *cmd: str) -> None:
    subprocess.run(["ip", "-n", ns, *cmd], check=True, capture_output=True, text=True)


def attach_taps(lay: L.Layout, h: int) -> list[tuple[str, str]]:
    """Bridge each NIC veth and mgmt0 of the host namespace to a tap; the
    namespace keeps no address (the VM has them). Returns (tap, mac) in order."""
    ns = lay.ns(lay.hosts[h])
    ports = [(f"nic{r}", mac(h, r)) for r in range(lay.size.rails)]
    ports.append((L.MGMT_HOST_IF, mac(h, 0x80)))
    taps = []
    for i, (ifname, m) in enumerate(ports):
        br, tap = f"br{i}", f"tap{i}"
        # A VM booted again on the same fabric (after `stop`) takes new ones.
        for old in (tap, br):
            subprocess.run(["ip", "-n", ns, "link", "del", old], capture_output=True)
        _netns(ns, "addr", "flush", "dev", ifname)
        _netns(ns, "link", "add", br, "type", "bridge", "forward_delay", "0")
        _netns(ns, "link", "set", ifname, "master", br)
        _netns(ns, "tuntap", "add", tap, "mode", "tap")
        _netns(ns, "link", "set", tap, "master", br)
        for dev in (tap, br):
            _netns(ns, "link", "set", dev, "up")
        taps.append((tap, m))
    return taps


def boot(lay: L.Layout, h: int, kernel: str, base_cpio: str, files: dict[str, str], mem_mb: int,
         timeout: float) -> dict:
    """Starts the VM of host h and waits until its guest says ready."""
    pfx = lay.prefix
    host = lay.hosts[h]
    d = vm_dir(pfx)
    os.makedirs(d, exist_ok=True)
    vm_cpio = os.path.join(d, f"{host}.cpio")
    initramfs.build_vm(vm_cpio + ".conf", files)
    with open(vm_cpio, "wb") as out:
        for part in (base_cpio, vm_cpio + ".conf"):
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out)
    os.unlink(vm_cpio + ".conf")
    taps = attach_taps(lay, h)
    console = os.path.join(d, f"{host}.console")
    if os.path.exists(console):  # a boot before this one said "ready" in it
        os.unlink(console)
    argv = ["ip", "netns", "exec", lay.ns(host), QEMU, "-accel", "tcg", "-machine", "q35",
            "-cpu", "max", "-smp", "1", "-m", str(mem_mb), "-nodefaults", "-no-user-config",
            "-display", "none", "-monitor", "none", "-serial", f"file:{console}", "-no-reboot",
            "-kernel", kernel, "-initrd", vm_cpio,
            "-append", "console=ttyS0 panic=-1 quiet loglevel=4 mitigations=off"]
    for i, (tap, m) in enumerate(taps):
        argv += ["-netdev", f"tap,id=n{i},ifname={tap},script=no,downscript=no",
                 "-device", f"virtio-net-pci,netdev=n{i},mac={m}"]
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=open(console + ".qemu", "w"), start_new_session=True)
    record = {"host": host, "pid": proc.pid, "console": console, "mem_mb": mem_mb}
    with open(os.path.join(d, f"{host}.json"), "w") as f:
        json.dump(record, f)
    while time.monotonic() - start < timeout:
        if proc.poll() is not None:
            raise VmError(f"QEMU of {host} exited {proc.returncode}: {_tail(console + '.qemu')}"
                          f" {_tail(console)}")
        text = _read(console)
        if "hm-guest: ready" in text:
            record["boot_seconds"] = round(time.monotonic() - start, 1)
            record["guest"] = [line for line in text.splitlines() if "hm-guest:" in line]
            return record
        time.sleep(0.5)
    stop(pfx, host)
    raise VmError(f"{host} not ready after {timeout:.0f}s: {_tail(console)}")


def _read(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def _tail(path: str, lines: int = 8) -> str:
    return " | ".join(_read(path).splitlines()[-lines:])


# busybox's shell runs its own applets first: iproute2's ip is asked for by path.
_GUEST_PRELUDE = 'ip() { /usr/bin/ip "$@"; }\n'


def guest_exec(lay: L.Layout, h: int, command: str, timeout: float = 30) -> str:
    """Runs a shell command in the guest through its management port."""
    out = subprocess.run(
        ["ip", "netns", "exec", lay.ns(L.MGMT_DEVICE), "busybox", "nc", "-w", "2",
         L.mgmt_ip(h), str(GUEST_SHELL_PORT)],
        input=_GUEST_PRELUDE + command + "\nexit\n", capture_output=True, text=True, timeout=timeout)
    return out.stdout


def stop(pfx: str, host: str) -> bool:
    """Ends the VM of `host` (SIGTERM, then SIGKILL). True when one was running."""
    path = os.path.join(vm_dir(pfx), f"{host}.json")
    try:
        with open(path) as f:
            pid = json.load(f)["pid"]
    except FileNotFoundError:
        return False
    os.unlink(path)
    ran = False
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
            ran = True
        except ProcessLookupError:
            break
        for _ in range(20):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return ran
            time.sleep(0.1)
    return ran


def stop_all(pfx: str) -> int:
    d = vm_dir(pfx)
    hosts = [n[:-5] for n in os.listdir(d) if n.endswith(".json")] if os.path.isdir(d) else []
    return sum(stop(pfx, h) for h in hosts)
