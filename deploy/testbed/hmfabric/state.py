"""Which fabric is up: the namespace prefix (from the environment) and the state
file `up` writes, /run/hostmesh-fabric/<prefix>/fabric.json."""

from __future__ import annotations

import json
import os
import re
import shutil

from . import layout as L

STATE_ROOT = "/run/hostmesh-fabric"
PREFIX_ENV = "HOSTMESH_FABRIC_PREFIX"
_SAFE_PREFIX = re.compile(r"[A-Za-z0-9_.-]{1,32}")


class StateError(RuntimeError):
    """No fabric, or not the one expected."""


def prefix() -> str:
    value = os.environ.get(PREFIX_ENV, L.NAMESPACE_PREFIX)
    if not _SAFE_PREFIX.fullmatch(value):
        raise StateError(f"{PREFIX_ENV}={value!r}: use 1-32 of A-Z a-z 0-9 _ . -")
    return value


def state_dir(pfx: str) -> str:
    """Also where other modules (faults) keep their per-fabric files."""
    return os.path.join(STATE_ROOT, pfx)


def _path(pfx: str) -> str:
    return os.path.join(state_dir(pfx), "fabric.json")


def load(pfx: str) -> dict | None:
    try:
        with open(_path(pfx)) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def save(pfx: str, record: dict) -> None:
    os.makedirs(state_dir(pfx), exist_ok=True)
    tmp = _path(pfx) + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    os.replace(tmp, _path(pfx))


def remove(pfx: str) -> None:
    shutil.rmtree(state_dir(pfx), ignore_errors=True)


def record(size: L.Size, hash_seed: int, icmp_unlimited: bool) -> dict:
    return {"hosts": size.hosts, "rails": size.rails, "spines": size.spines, "pods": size.pods,
            "hash_seed": hash_seed, "icmp_unlimited": icmp_unlimited}


def size_of(rec: dict) -> L.Size:
    return L.Size(rec["hosts"], rec["rails"], rec["spines"], rec["pods"])


def current(pfx: str) -> tuple[L.Layout, dict]:
    """The layout and record of the fabric that is up, or a StateError saying so."""
    rec = load(pfx)
    if rec is None:
        raise StateError(f"no fabric with prefix {pfx!r} is up: run `fabric up`")
    return L.build_layout(size_of(rec), pfx), rec
