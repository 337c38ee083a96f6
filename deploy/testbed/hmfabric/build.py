"""Bringing a fabric up and down: what to configure in which namespace (pure
functions of the layout) and the few batched calls that do it."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass

from . import faults, forward_cmd, start_cmd
from . import layout as L
from . import netns
from . import state

# IPv6 is off everywhere: the fabric is IPv4 only, and router solicitations or
# MLD reports on every veth would blur the interface counters tests read.
_NO_IPV6 = {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"}

# Per-NIC policy routing on hosts sends NIC-to-NIC packets out on the wire, so
# they arrive from a local source address: accept_local lets them in.
HOST_SYSCTLS = {
    **_NO_IPV6,
    "net.ipv4.conf.all.rp_filter": "0",
    "net.ipv4.conf.default.rp_filter": "0",
    "net.ipv4.conf.all.accept_local": "1",
    "net.ipv4.conf.default.accept_local": "1",
}

ICMP_UNLIMITED = {
    "net.ipv4.icmp_ratelimit": "0",
    "net.ipv4.icmp_msgs_per_sec": "1000000",
    "net.ipv4.icmp_msgs_burst": "1000000",
}


@dataclass(frozen=True)
class Options:
    hash_seed: int = L.DEFAULT_HASH_SEED
    icmp_unlimited: bool = False


def switch_sysctls(opts: Options) -> dict[str, str]:
    """L4 ECMP with a fixed seed (one 5-tuple, one path, every run); ICMP errors
    from the ingress interface so a traceroute hop names a link."""
    values = {
        **_NO_IPV6,
        "net.ipv4.ip_forward": "1",
        "net.ipv4.fib_multipath_hash_policy": "3",
        "net.ipv4.fib_multipath_hash_fields": str(0x37),
        "net.ipv4.fib_multipath_hash_seed": str(opts.hash_seed),
        "net.ipv4.icmp_errors_use_inbound_ifaddr": "1",
        "net.ipv4.conf.all.rp_filter": "0",
        "net.ipv4.conf.default.rp_filter": "0",
        "net.ipv4.conf.all.ignore_routes_with_linkdown": "1",
        "net.ipv4.conf.default.ignore_routes_with_linkdown": "1",
    }
    if opts.icmp_unlimited:
        values.update(ICMP_UNLIMITED)
    return values


def sysctls(lay: L.Layout, opts: Options) -> dict[str, dict[str, str]]:
    """Per namespace; set before the interfaces exist so `default.*` reaches them."""
    # Hosts answer traceroute too (port unreachable from the destination NIC).
    host = {**HOST_SYSCTLS, **(ICMP_UNLIMITED if opts.icmp_unlimited else {})}
    out = {lay.ns(h): host for h in lay.hosts}
    out.update({lay.ns(sw): switch_sysctls(opts) for sw in lay.rail_switches + lay.spines})
    out[lay.ns(L.MGMT_DEVICE)] = dict(_NO_IPV6)
    return out


def _veth(a: L.Endpoint, b: L.Endpoint) -> str:
    return (f"link add {a.ifname} netns {a.namespace} "
            f"type veth peer name {b.ifname} netns {b.namespace}")


def veth_commands(lay: L.Layout) -> list[str]:
    """Every veth, created straight into its two namespaces (root `ip -batch`)."""
    cmds = [_veth(link.a, link.b) for link in lay.links]
    for host in lay.hosts:
        cmds.append(f"link add {L.MGMT_HOST_IF} netns {lay.ns(host)} "
                    f"type veth peer name {host} netns {lay.ns(L.MGMT_DEVICE)}")
    return cmds


def _up_and_address(ends: list[L.Endpoint]) -> list[str]:
    cmds = [f"link set {e.ifname} up" for e in ends]
    return cmds + [f"address add {e.ip}/31 dev {e.ifname}" for e in ends]


def host_commands(lay: L.Layout, h: int) -> list[str]:
    """NICs with per-NIC tables and rules (DESIGN 4.3), then the management port."""
    nics = [lay.nic_link(h, r) for r in range(lay.size.rails)]
    cmds = ["link set lo up"] + _up_and_address([link.a for link in nics])
    for r, link in enumerate(nics):
        nic, table = link.a, L.nic_table(r)
        cmds += [
            f"route add {link.b.ip}/31 dev {nic.ifname} src {nic.ip} table {table}",
            f"route add default via {link.b.ip} dev {nic.ifname} table {table}",
            f"rule add from {nic.ip} iif lo lookup {table} pref {L.RULE_FROM_PREF_BASE + r}",
            f"rule add oif {nic.ifname} lookup {table} pref {L.RULE_OIF_PREF_BASE + r}",
        ]
    cmds += [f"rule add lookup local pref {L.RULE_LOCAL_PREF}", "rule del pref 0 lookup local"]
    prefixlen = L.MGMT_NET.prefixlen
    return cmds + [f"link set {L.MGMT_HOST_IF} up",
                   f"address add {L.mgmt_ip(h)}/{prefixlen} dev {L.MGMT_HOST_IF}"]


def rail_switch_commands(lay: L.Layout, p: int, r: int) -> list[str]:
    """Ports to its pod's hosts and to every spine; default route ECMP over the spines."""
    down = [lay.nic_link(h, r).b for h in lay.pod_hosts(p)]
    up = [lay.fabric_link(p, r, s) for s in range(lay.size.spines)]
    nexthops = " ".join(f"nexthop via {link.b.ip} dev {link.a.ifname}" for link in up)
    return (["link set lo up"] + _up_and_address(down + [link.a for link in up])
            + [f"route add default {nexthops}"])


def _nic_subnets(lay: L.Layout, p: int, r: int) -> list[ipaddress.IPv4Network]:
    """The NIC /31s behind rail switch (p, r), as few prefixes as cover them."""
    hosts = lay.pod_hosts(p)
    first = ipaddress.IPv4Address(lay.nic_link(hosts[0], r).b.ip)
    last = ipaddress.IPv4Address(lay.nic_link(hosts[-1], r).a.ip)
    return list(ipaddress.summarize_address_range(first, last))


def spine_commands(lay: L.Layout, s: int) -> list[str]:
    """Ports to every rail switch; each rail switch's NIC subnets routed to it."""
    ports = [(p, r, lay.fabric_link(p, r, s))
             for p in range(lay.size.pods) for r in range(lay.size.rails)]
    cmds = ["link set lo up"] + _up_and_address([link.b for _, _, link in ports])
    for p, r, link in ports:
        cmds += [f"route add {net} via {link.a.ip} dev {link.b.ifname}"
                 for net in _nic_subnets(lay, p, r)]
    return cmds


def mgmt_commands(lay: L.Layout) -> list[str]:
    """The management bridge: the analyzer's address and one port per host."""
    cmds = ["link set lo up", f"link add {L.MGMT_BRIDGE} type bridge"]
    for host in lay.hosts:
        cmds += [f"link set {host} master {L.MGMT_BRIDGE}", f"link set {host} up"]
    return cmds + [f"link set {L.MGMT_BRIDGE} up",
                   f"address add {L.ANALYZER_IP}/{L.MGMT_NET.prefixlen} dev {L.MGMT_BRIDGE}"]


def namespace_commands(lay: L.Layout) -> dict[str, list[str]]:
    """The `ip -n NS -batch` input of every namespace."""
    out = {lay.ns(host): host_commands(lay, h) for h, host in enumerate(lay.hosts)}
    for p in range(lay.size.pods):
        for r in range(lay.size.rails):
            out[lay.ns(L.rail_switch_name(p, r))] = rail_switch_commands(lay, p, r)
    for s, spine in enumerate(lay.spines):
        out[lay.ns(spine)] = spine_commands(lay, s)
    out[lay.ns(L.MGMT_DEVICE)] = mgmt_commands(lay)
    return out


def up(lay: L.Layout, opts: Options) -> None:
    """Namespaces, sysctls, veths, then every namespace's own batch."""
    netns.ip_batch(f"netns add {ns}" for ns in lay.namespaces)
    for ns, values in sysctls(lay, opts).items():
        netns.set_sysctls(ns, values)
    netns.ip_batch(veth_commands(lay))
    netns.ip_batches(namespace_commands(lay))


def fabric_namespaces(prefix: str) -> list[str]:
    return [ns for ns in netns.list_namespaces() if L.is_fabric_namespace(ns, prefix)]


def down(prefix: str) -> int:
    """Removes every namespace of the fabric `prefix`, whether or not its state
    survived (a crash halfway through `up`), and the state. Returns how many
    namespaces went. Faults go first: they may run processes or hold state."""
    namespaces = fabric_namespaces(prefix)
    fault_error = None
    start_cmd.stop(prefix, grace=2.0)  # agents and analyzer of `fabric start`
    forward_cmd.stop_all(prefix)
    try:
        faults.teardown(prefix)
    except Exception as exc:  # still remove the fabric; say so afterwards
        fault_error = exc
    netns.kill(pid for pid in netns.pids_in(namespaces) if pid != os.getpid())
    if namespaces:
        netns.ip_batch((f"netns del {ns}" for ns in namespaces), force=True)
    state.remove(prefix)
    if fault_error:
        raise netns.NetnsError(f"fabric removed, but undoing its faults failed: {fault_error}")
    return len(namespaces)
