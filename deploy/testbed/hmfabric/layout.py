"""Names and addresses of the emulated rail-optimized fabric: pure, no I/O.

Everything the testbed creates is derived here from (hosts, rails, spines, pods),
so a given size always yields the same namespaces, interfaces and addresses.
The scheme is documented in deploy/testbed/README.md; the topology generator
(topology/) must produce identical addressing.

Devices
  host h            "h%03d"      namespace PREFIX+name, NICs "nic<r>" (one per rail)
  rail switch p,r   "p<p>r<r>"   pod p, rail r; ports named after the peer device
  spine s           "s%02d"      ports named after the peer rail switch
  management        "mgmt"       bridge "br0", the analyzer's address, a port per host

Addresses (RFC 2544 benchmarking space, never routed outside the testbed)
  NIC link (h, r):          idx = r*H + h,            198.18.0.0 + 2*idx (switch), +1 (NIC)
  fabric link (p, r, s):    idx = (p*R + r)*S + s,    198.19.0.0 + 2*idx (rail), +1 (spine)
  management:               198.19.128.0/17, analyzer 198.19.128.1, host h 198.19.129.0 + h
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

NAMESPACE_PREFIX = "hm-"
NIC_LINK_BASE = int(ipaddress.IPv4Address("198.18.0.0"))
FABRIC_LINK_BASE = int(ipaddress.IPv4Address("198.19.0.0"))
MGMT_NET = ipaddress.IPv4Network("198.19.128.0/17")
ANALYZER_IP = "198.19.128.1"
MGMT_HOST_BASE = int(ipaddress.IPv4Address("198.19.129.0"))
MGMT_BRIDGE = "br0"
MGMT_HOST_IF = "mgmt0"
MGMT_DEVICE = "mgmt"

ANALYZER_GRPC_PORT = 50051
ANALYZER_HTTP_PORT = 8080
AGENT_METRICS_PORT = 9100
PROBE_DST_PORT = 4791  # RoCEv2

NIC_TABLE_BASE = 100  # per-NIC routing table: 100 + rail
RULE_FROM_PREF_BASE = 100  # "from <nic ip> iif lo lookup <table>"
RULE_OIF_PREF_BASE = 200  # "oif <nic> lookup <table>"
RULE_LOCAL_PREF = 1000  # the local table, moved after the per-NIC rules

DEFAULT_HASH_SEED = 1  # fib_multipath_hash_seed on every switch: repeatable ECMP

MAX_NIC_LINKS = 1 << 15  # 198.18.0.0/16 holds 32768 /31s
MAX_FABRIC_LINKS = 1 << 14  # 198.19.0.0/17 holds 16384 /31s
MAX_MGMT_HOSTS = 32768 - 256


class LayoutError(ValueError):
    """A fabric size the addressing scheme cannot express."""


def ip_str(value: int) -> str:
    return str(ipaddress.IPv4Address(value))


@dataclass(frozen=True)
class Size:
    hosts: int
    rails: int
    spines: int
    pods: int = 1

    def validate(self) -> None:
        for name in ("hosts", "rails", "spines", "pods"):
            if getattr(self, name) < 1:
                raise LayoutError(f"--{name} must be at least 1, got {getattr(self, name)}")
        if self.rails < 2:
            raise LayoutError("--rails must be at least 2: probes go between NICs of one host")
        if self.hosts % self.pods:
            raise LayoutError(
                f"--hosts ({self.hosts}) must be a multiple of --pods ({self.pods})")
        if self.rails * self.hosts > MAX_NIC_LINKS:
            raise LayoutError(f"hosts x rails must be at most {MAX_NIC_LINKS}")
        if self.pods * self.rails * self.spines > MAX_FABRIC_LINKS:
            raise LayoutError(f"pods x rails x spines must be at most {MAX_FABRIC_LINKS}")
        if self.hosts > MAX_MGMT_HOSTS:
            raise LayoutError(f"--hosts must be at most {MAX_MGMT_HOSTS}")

    @property
    def hosts_per_pod(self) -> int:
        return self.hosts // self.pods

    def describe(self) -> str:
        pods = f"{self.pods} pod{'s' if self.pods > 1 else ''}"
        return f"{self.hosts} hosts x {self.rails} rails x {self.spines} spines, {pods}"


@dataclass(frozen=True)
class Endpoint:
    device: str  # host, rail switch or spine name
    namespace: str
    ifname: str
    ip: str


@dataclass(frozen=True)
class Link:
    """A /31 point-to-point link; side a is the lower tier."""

    name: str
    kind: str  # "nic" (host NIC to rail switch) or "fabric" (rail switch to spine)
    a: Endpoint
    b: Endpoint

    def side(self, device: str) -> Endpoint:
        """The end on `device` (a host name matches its NIC's end)."""
        for end in (self.a, self.b):
            if device in (end.device, _host_of(end.device)):
                return end
        raise LayoutError(f"device {device!r} is not an end of link {self.name}")


def _host_of(device: str) -> str:
    return device.split(".", 1)[0]


def device_of(end: Endpoint) -> str:
    """The device an end sits on: a NIC's end ("h000.nic0") sits on its host."""
    return _host_of(end.device)


def host_name(h: int) -> str:
    return f"h{h:03d}"


def nic_name(r: int) -> str:
    return f"nic{r}"


def rail_switch_name(p: int, r: int) -> str:
    return f"p{p}r{r}"


def spine_name(s: int) -> str:
    return f"s{s:02d}"


def namespace(device: str, prefix: str = NAMESPACE_PREFIX) -> str:
    return prefix + _host_of(device)


_DEVICE_NAME = re.compile(r"h\d{3,}|p\d+r\d+|s\d{2,}|" + MGMT_DEVICE)


def is_fabric_namespace(name: str, prefix: str = NAMESPACE_PREFIX) -> bool:
    """Whether `name` is a namespace of the fabric with `prefix` (prefixes may nest:
    "hm-" must not claim "hm-x-h000", so the rest has to be a device name)."""
    return name.startswith(prefix) and _DEVICE_NAME.fullmatch(name[len(prefix):]) is not None


def nic_table(r: int) -> int:
    return NIC_TABLE_BASE + r


def mgmt_ip(h: int) -> str:
    return ip_str(MGMT_HOST_BASE + h)


@dataclass
class Layout:
    size: Size
    prefix: str = NAMESPACE_PREFIX
    hosts: list[str] = field(default_factory=list)
    rail_switches: list[str] = field(default_factory=list)
    spines: list[str] = field(default_factory=list)
    nic_links: list[Link] = field(default_factory=list)
    fabric_links: list[Link] = field(default_factory=list)

    @property
    def links(self) -> list[Link]:
        return self.nic_links + self.fabric_links

    @property
    def namespaces(self) -> list[str]:
        devices = self.hosts + self.rail_switches + self.spines + [MGMT_DEVICE]
        return [namespace(d, self.prefix) for d in devices]

    def ns(self, device: str) -> str:
        """The namespace of a device of this fabric."""
        return namespace(device, self.prefix)

    def pod_of_host(self, h: int) -> int:
        return h // self.size.hosts_per_pod

    def pod_hosts(self, p: int) -> range:
        return range(p * self.size.hosts_per_pod, (p + 1) * self.size.hosts_per_pod)

    def nic_link(self, h: int, r: int) -> Link:
        return self.nic_links[r * self.size.hosts + h]

    def fabric_link(self, p: int, r: int, s: int) -> Link:
        return self.fabric_links[(p * self.size.rails + r) * self.size.spines + s]

    def link(self, name: str) -> Link:
        for link in self.links:
            if link.name == name:
                return link
        raise LayoutError(f"no link named {name!r} (try 'fabric topology')")

    def host_index(self, name: str) -> int:
        if name not in self.hosts:
            raise LayoutError(f"no host named {name!r} (hosts are h000..{self.hosts[-1]})")
        return int(name[1:])

    def peer(self, device: str, ifname: str) -> Endpoint:
        """The far end of the link on interface `ifname` of `device` (host, switch)."""
        for link in self.links:
            for end, other in ((link.a, link.b), (link.b, link.a)):
                if _host_of(end.device) == device and end.ifname == ifname:
                    return other
        raise LayoutError(f"{device} has no fabric interface {ifname!r}")

    def endpoint_by_ip(self, ip: str) -> tuple[Link, Endpoint]:
        for link in self.links:
            for end in (link.a, link.b):
                if end.ip == ip:
                    return link, end
        raise LayoutError(f"no interface of the fabric has address {ip}")


def build_layout(size: Size, prefix: str = NAMESPACE_PREFIX) -> Layout:
    size.validate()
    lay = Layout(size=size, prefix=prefix)
    lay.hosts = [host_name(h) for h in range(size.hosts)]
    lay.rail_switches = [rail_switch_name(p, r) for p in range(size.pods) for r in range(size.rails)]
    lay.spines = [spine_name(s) for s in range(size.spines)]
    for r in range(size.rails):
        for h in range(size.hosts):
            idx = r * size.hosts + h
            sw = rail_switch_name(lay.pod_of_host(h), r)
            host = host_name(h)
            nic = Endpoint(f"{host}.{nic_name(r)}", namespace(host, prefix), nic_name(r),
                           ip_str(NIC_LINK_BASE + 2 * idx + 1))
            port = Endpoint(sw, namespace(sw, prefix), host, ip_str(NIC_LINK_BASE + 2 * idx))
            lay.nic_links.append(Link(f"{nic.device}-{sw}", "nic", nic, port))
    for p in range(size.pods):
        for r in range(size.rails):
            for s in range(size.spines):
                idx = (p * size.rails + r) * size.spines + s
                sw, sp = rail_switch_name(p, r), spine_name(s)
                up = Endpoint(sw, namespace(sw, prefix), sp, ip_str(FABRIC_LINK_BASE + 2 * idx))
                down = Endpoint(sp, namespace(sp, prefix), sw,
                                ip_str(FABRIC_LINK_BASE + 2 * idx + 1))
                lay.fabric_links.append(Link(f"{sw}-{sp}", "fabric", up, down))
    return lay
