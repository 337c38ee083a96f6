"""CPU cgroups of the `cpu` fault: network namespaces do not isolate CPU, so
a host's "machine" is a cgroup with a CPU quota holding that host's agent and
the load. The load then starves that agent only; the rest of the machine (the
other hosts' agents, the analyzer, whoever else runs here) keeps its CPUs.

Both layouts of the kernel's cgroup filesystem:

  v2 (unified; /sys/fs/cgroup/cgroup.controllers exists)  cpu.max "QUOTA PERIOD"
  v1 (the cpu controller's own hierarchy, found in /proc/self/mounts, e.g.
      /sys/fs/cgroup/cpu or /sys/fs/cgroup/cpu,cpuacct)   cpu.cfs_quota_us, cpu.cfs_period_us

A fault's cgroup is `hostmesh-<prefix><fault id>` right under the hierarchy's
root, so `fabric down` finds the cgroups of its own prefix by name even when
the fault records are gone. Paths given to and returned by this module are
relative to that root ("/hostmesh-hm-f3"), as /proc/PID/cgroup shows them.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time

V2_ROOT = "/sys/fs/cgroup"
NAME_PREFIX = "hostmesh-"
MIN_QUOTA_US = 1000  # the kernel's floor for a CFS quota and period


class CgroupError(RuntimeError):
    """No usable CPU controller, or a cgroup could not be changed."""


def hierarchy() -> tuple[int, str]:
    """(version, mount point) of the CPU controller."""
    controllers = os.path.join(V2_ROOT, "cgroup.controllers")
    if os.path.exists(controllers):
        with open(controllers) as f:
            if "cpu" not in f.read().split():
                raise CgroupError(f"cgroup v2 without the cpu controller ({controllers})")
        return 2, V2_ROOT
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 4 and fields[2] == "cgroup" and "cpu" in fields[3].split(","):
                return 1, fields[1].replace("\\040", " ")
    raise CgroupError("no cgroup cpu controller is mounted (cgroup v2 at /sys/fs/cgroup, or "
                      "v1 e.g. at /sys/fs/cgroup/cpu)")


EXPOSE_ROOT = "/run/hostmesh-cgroup"  # never inside a fabric's state dir, which `down` removes


def exposed_at(prefix: str) -> str:
    return os.path.join(EXPOSE_ROOT, prefix)


def expose(prefix: str) -> str | None:
    """Bind-mounts the CPU controller's hierarchy where the fabric's agents can
    see it: `ip netns exec` mounts the namespace's own sysfs over /sys, which
    hides /sys/fs/cgroup, so an agent could not read its cgroup (the cpu
    fault's) as an agent on a real host does. The mount is listed in the
    agents' /proc/self/mounts with its type ("cgroup" with "cpu", or
    "cgroup2"), which is how they find it. Call before the agents start (their
    mount namespaces are copies taken then). Returns why it could not be
    done, None when it is (or already was) in place."""
    try:
        _, mount = hierarchy()
    except (CgroupError, OSError) as exc:
        return str(exc)
    point = exposed_at(prefix)
    if os.path.ismount(point):
        return None
    os.makedirs(point, exist_ok=True)
    done = subprocess.run(["mount", "--bind", mount, point], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        with contextlib.suppress(OSError):
            os.rmdir(point)
        return f"mount --bind {mount} {point}: {done.stderr.strip()}"
    return None


def unexpose(prefix: str) -> None:
    """Undoes expose (lazily: an agent still exiting may hold it); no error
    when it is not there."""
    point = exposed_at(prefix)
    if os.path.ismount(point):
        subprocess.run(["umount", "-l", point], capture_output=True, check=False)
    with contextlib.suppress(OSError):
        os.rmdir(point)


def name_for(prefix: str, fault_id: str) -> str:
    return f"{NAME_PREFIX}{prefix}{fault_id}"


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as exc:
        raise CgroupError(f"writing {text.strip()!r} to {path}: {exc.strerror}") from None


def create(version: int, mount: str, name: str, quota_us: int, period_us: int) -> str:
    """A new cgroup `name` allowed `quota_us` of CPU time per `period_us`;
    returns its path relative to the root."""
    if version == 2:
        control = os.path.join(mount, "cgroup.subtree_control")
        with open(control) as f:
            if "cpu" not in f.read().split():
                _write(control, "+cpu")
    path = os.path.join(mount, name)
    try:
        os.mkdir(path)
    except OSError as exc:
        raise CgroupError(f"mkdir {path}: {exc.strerror}") from None
    try:
        if version == 2:
            _write(os.path.join(path, "cpu.max"), f"{quota_us} {period_us}")
        else:
            _write(os.path.join(path, "cpu.cfs_period_us"), str(period_us))
            _write(os.path.join(path, "cpu.cfs_quota_us"), str(quota_us))
    except CgroupError:
        os.rmdir(path)
        raise
    return "/" + name


def quota_of(version: int, mount: str, rel: str) -> tuple[int, int]:
    """(quota_us, period_us) of a cgroup; quota -1 means unlimited."""
    path = mount + rel
    if version == 2:
        with open(os.path.join(path, "cpu.max")) as f:
            quota, period = f.read().split()
        return (-1 if quota == "max" else int(quota)), int(period)
    with open(os.path.join(path, "cpu.cfs_quota_us")) as f:
        quota = int(f.read())
    with open(os.path.join(path, "cpu.cfs_period_us")) as f:
        return quota, int(f.read())


def cgroup_of(pid: int, version: int) -> str | None:
    """The CPU cgroup of `pid` (relative path), None when it is gone."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        hid, controllers, path = line.split(":", 2)
        if (version == 2 and hid == "0") or (version == 1 and "cpu" in controllers.split(",")):
            return path
    return None


def members(mount: str, rel: str) -> list[int]:
    """Processes in the cgroup (every thread of each goes with it)."""
    try:
        with open(os.path.join(mount + rel, "cgroup.procs")) as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return []


def move(pid: int, mount: str, rel: str) -> bool:
    """Moves the process (all its threads) into the cgroup; False if it is gone."""
    try:
        with open(os.path.join(mount + rel, "cgroup.procs"), "w") as f:
            f.write(str(pid))
        return True
    except ProcessLookupError:
        return False
    except OSError as exc:
        if not os.path.exists(f"/proc/{pid}"):
            return False
        raise CgroupError(f"moving {pid} into {mount + rel}: {exc.strerror}") from None


def remove(mount: str, rel: str, timeout: float = 3.0) -> None:
    """Moves whatever is left in the cgroup to the root and removes it (a killed
    process may take a moment to leave). No error when it is already gone."""
    path = mount + rel
    deadline = time.monotonic() + timeout
    while os.path.isdir(path):
        for pid in members(mount, rel):
            move(pid, mount, "/")
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if time.monotonic() > deadline:
                raise CgroupError(f"rmdir {path}: {exc.strerror} (still holds "
                                  f"{members(mount, rel)})") from None
            time.sleep(0.05)


def remove_all(prefix: str) -> list[str]:
    """Removes every fault cgroup of the fabric `prefix` (by name); returns them."""
    try:
        _, mount = hierarchy()
    except CgroupError:
        return []
    pattern = re.compile(re.escape(NAME_PREFIX + prefix) + r"f\d+")
    gone = []
    for entry in sorted(os.listdir(mount)):
        if pattern.fullmatch(entry) and os.path.isdir(os.path.join(mount, entry)):
            remove(mount, "/" + entry)
            gone.append(entry)
    return gone
