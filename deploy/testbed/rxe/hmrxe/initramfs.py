"""The guest's root: one uncompressed newc cpio built from the host's files
(Debian's kernel modules, busybox-static, iproute2, rdma-core's user space, the
agent built in the tree) plus a small per-VM archive appended to it (its
config). The kernel unpacks concatenated archives in order."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import time

# What the guest loads; module_order() puts dependencies first. crc32_generic
# backs rxe's ICRC (a crypto algorithm, not a symbol dependency).
MODULES = [
    "failover", "net_failover", "virtio_ring", "virtio", "virtio_pci_legacy_dev",
    "virtio_pci_modern_dev", "virtio_pci", "virtio_net", "crc32_generic", "ib_core",
    "ib_uverbs", "udp_tunnel", "ip6_udp_tunnel", "rdma_rxe",
]
LIBDIR = "/usr/lib/x86_64-linux-gnu"
# Host programs copied with their shared libraries.
PROGRAMS = ["/usr/bin/ip", "/usr/bin/rdma", "/usr/bin/ibv_devinfo"]
RDMA_FILES = [f"{LIBDIR}/libibverbs/librxe-rdmav34.so", "/etc/libibverbs.d/rxe.driver"]
BUSYBOX = "/bin/busybox"
APPLETS = ["sh", "mount", "insmod", "mkdir", "cat", "echo", "sleep", "ls", "poweroff", "reboot",
           "ps", "kill", "grep", "seq", "tr", "cut", "head", "free", "date", "uname", "env",
           "ifconfig", "sysctl", "dmesg", "nc", "wc", "wget"]


class Missing(RuntimeError):
    """A file the guest needs is not on this host (name the package)."""


def kernel_version(boot: str = "/boot") -> str:
    """The newest Debian kernel with rdma_rxe among its modules."""
    found = []
    for name in os.listdir(boot) if os.path.isdir(boot) else []:
        m = re.fullmatch(r"vmlinuz-(.+)", name)
        if m and os.path.exists(f"/lib/modules/{m.group(1)}/kernel/drivers/infiniband/sw/rxe"):
            found.append(m.group(1))
    if not found:
        raise Missing("no /boot/vmlinuz-* with rdma_rxe in /lib/modules (install linux-image-amd64)")
    return sorted(found)[-1]


def module_path(kver: str, name: str) -> str:
    out = subprocess.run(["modinfo", "-k", kver, "-n", name], capture_output=True, text=True)
    path = out.stdout.strip()
    if out.returncode != 0 or not path.endswith(".ko"):
        raise Missing(f"kernel module {name} not found for {kver} (modinfo: {out.stderr.strip()})")
    return path


def module_order(kver: str, names: list[str]) -> list[str]:
    """names and everything they depend on, each after its dependencies."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        out = subprocess.run(["modinfo", "-k", kver, "-F", "depends", name], capture_output=True,
                             text=True)
        for dep in filter(None, out.stdout.strip().split(",")):
            visit(dep)
        order.append(name)

    for name in names:
        visit(name)
    return order


def shared_libraries(path: str) -> list[str]:
    out = subprocess.run(["ldd", path], capture_output=True, text=True)
    libs = []
    for line in out.stdout.splitlines():
        m = re.search(r"(/\S+) \(0x", line)
        if m:
            libs.append(m.group(1))
    return libs


class Cpio:
    """A newc archive written straight to a file (no cpio(1) needed)."""

    def __init__(self, path: str) -> None:
        self._f = open(path, "wb")
        self._ino = 1
        self._mtime = int(time.time())
        self._dirs: set[str] = set()

    def _entry(self, name: str, mode: int, data: bytes = b"") -> None:
        name_b = name.encode() + b"\0"
        # A real mtime: gRPC's certificate watcher takes 0 for a failed stat
        # and never loads the guest's TLS files.
        fields = [self._ino, mode, 0, 0, 1, self._mtime, len(data), 0, 0, 0, 0, len(name_b), 0]
        self._ino += 1
        header = b"070701" + b"".join(b"%08X" % v for v in fields)
        self._f.write(header + name_b)
        self._f.write(b"\0" * (-(110 + len(name_b)) % 4))
        self._f.write(data)
        self._f.write(b"\0" * (-len(data) % 4))

    def dir(self, name: str) -> None:
        name = name.strip("/")
        if not name or name in self._dirs:
            return
        self.dir(os.path.dirname(name))
        self._dirs.add(name)
        self._entry(name, stat.S_IFDIR | 0o755)

    def file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        name = name.strip("/")
        self.dir(os.path.dirname(name))
        self._entry(name, stat.S_IFREG | mode, data)

    def copy(self, src: str, dst: str | None = None) -> None:
        real = os.path.realpath(src)
        with open(real, "rb") as f:
            self.file(dst or src, f.read(), os.stat(real).st_mode & 0o777)

    def symlink(self, name: str, target: str) -> None:
        name = name.strip("/")
        self.dir(os.path.dirname(name))
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def close(self) -> None:
        self._entry("TRAILER!!!", 0)
        self._f.write(b"\0" * (-self._f.tell() % 512))
        self._f.close()


def verbs_module(agent: str) -> str:
    """The agent's verbs transport, a module it loads only when verbs is chosen:
    beside the binary in the build tree, /usr/lib/hostmesh in the guest."""
    return os.path.join(os.path.dirname(agent), "hostmesh-agent-verbs.so")


# Where the guest keeps the verbs test binaries (tests/rdma runs them there).
GUEST_TEST_DIR = "/usr/libexec/hostmesh-tests"


def build_base(out: str, agent: str, init_script: str, kver: str,
               tests: list[str] | None = None) -> dict:
    """The shared part of every guest: `tests` are test binaries of the build
    tree, copied to GUEST_TEST_DIR. Returns what went in, for the log."""
    tests = tests or []
    module = verbs_module(agent)
    for path in [BUSYBOX, *PROGRAMS, *RDMA_FILES, agent, module, *tests]:
        if not os.path.exists(path):
            raise Missing(f"{path} is missing (busybox-static, iproute2, rdma-core, "
                          "ibverbs-providers, ibverbs-utils, or build the agent)")
    mods = [module_path(kver, m) for m in module_order(kver, MODULES)]
    archive = Cpio(out)
    for d in ["dev", "proc", "sys", "tmp", "run", "etc/hostmesh", "var/log"]:
        archive.dir(d)
    archive.copy(BUSYBOX, "bin/busybox")
    for applet in APPLETS:
        archive.symlink(f"bin/{applet}", "busybox")
    with open(init_script, "rb") as f:
        archive.file("init", f.read(), 0o755)
    libs: set[str] = set()
    for prog in [*PROGRAMS, agent, module, *tests]:
        libs.update(shared_libraries(prog))
    libs.update(shared_libraries(RDMA_FILES[0]))
    for lib in sorted(libs):
        archive.copy(lib, lib)
    for prog in PROGRAMS:
        archive.copy(prog, prog)
    for f in RDMA_FILES:
        archive.copy(f, f)
    stripped = out + ".agent"
    subprocess.run(["objcopy", "--strip-debug", agent, stripped], check=True)
    archive.copy(stripped, "/usr/bin/hostmesh-agent")
    subprocess.run(["objcopy", "--strip-debug", module, stripped], check=True)
    archive.copy(stripped, "/usr/lib/hostmesh/hostmesh-agent-verbs.so")
    for test in tests:
        subprocess.run(["objcopy", "--strip-debug", test, stripped], check=True)
        archive.copy(stripped, f"{GUEST_TEST_DIR}/{os.path.basename(test)}")
    os.unlink(stripped)
    for i, path in enumerate(mods):
        archive.copy(path, f"/lib/modules/{i:02d}-{os.path.basename(path)}")
    archive.close()
    return {"kernel": kver, "modules": len(mods), "libraries": len(libs), "tests": len(tests),
            "bytes": os.path.getsize(out)}


def build_vm(out: str, files: dict[str, str]) -> None:
    """The per-VM archive: its config files (path -> text)."""
    archive = Cpio(out)
    for path, text in files.items():
        archive.file(path, text.encode())
    archive.close()
