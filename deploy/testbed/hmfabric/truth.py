"""Ground truth for tests: the path a UDP 5-tuple takes, asked of every hop's
kernel with `ip route get` (the same FIB lookup and multipath hash the packet
meets), from the source host to the destination host."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

from . import layout as L
from . import netns

MAX_HOPS = 16  # a two-tier fabric needs 5; more means a routing loop

RouteGet = Callable[[str, str, str, "str | None", int, int], dict]


@dataclass(frozen=True)
class Hop:
    device: str
    ingress_if: str | None  # None on the source host
    ingress_ip: str | None  # what a traceroute shows (icmp_errors_use_inbound_ifaddr)
    egress_if: str | None  # None on the destination host

    def as_dict(self) -> dict:
        return asdict(self)


def _host_nic(lay: L.Layout, ip: str, role: str) -> L.Endpoint:
    link, end = lay.endpoint_by_ip(ip)
    if link.kind != "nic" or end != link.a:
        raise L.LayoutError(f"{role} {ip} is not a host NIC address ({L.device_of(end)} has it)")
    return end


def path(lay: L.Layout, src: str, dst: str, sport: int, dport: int = L.PROBE_DST_PORT,
         route_get: RouteGet = netns.route_get) -> list[Hop]:
    """Hops from the host owning `src` to the host owning `dst`. The source host
    resolves without iif (its per-NIC rules pick the NIC); each later hop is asked
    with iif = the interface the packet came in on."""
    device = L.device_of(_host_nic(lay, src, "source"))
    _host_nic(lay, dst, "destination")
    ingress: L.Endpoint | None = None
    hops: list[Hop] = []
    for _ in range(MAX_HOPS):
        route = route_get(lay.ns(device), dst, src,
                          ingress.ifname if ingress else None, sport, dport)
        in_if, in_ip = (ingress.ifname, ingress.ip) if ingress else (None, None)
        if route.get("type") == "local":
            return hops + [Hop(device, in_if, in_ip, None)]
        egress = route["dev"]
        hops.append(Hop(device, in_if, in_ip, egress))
        peer = lay.peer(device, egress)
        if route.get("gateway", peer.ip) != peer.ip:
            raise netns.NetnsError(f"{device} routes via {route['gateway']}, "
                                   f"but {egress} leads to {peer.ip}")
        device, ingress = L.device_of(peer), peer
    raise netns.NetnsError(f"no delivery after {MAX_HOPS} hops: a routing loop? "
                           + " ".join(h.device for h in hops))


def format_hops(hops: list[Hop]) -> str:
    rows = [("# device", "ingress_if", "ingress_ip", "egress_if")]
    rows += [(h.device, h.ingress_if or "-", h.ingress_ip or "-", h.egress_if or "-")
             for h in hops]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths + [0])).rstrip()
                     for row in rows) + "\n"
