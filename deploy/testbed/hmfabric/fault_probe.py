"""Measure what a fault does: UDP between two NICs of one host, per source
port, counting arrivals and one-way delay (sender's clock at send, kernel
receive timestamp SO_TIMESTAMPNS at arrival: every namespace shares one clock).

    from hmfabric import fault_probe
    stats = fault_probe.measure(ns, ("nic0", "198.18.0.1"), ("nic1", "198.18.0.5"),
                                sports=[40000, 40001], count=100, interval=0.001)
    stats[40000].received, stats[40000].delays_ns

Runs in the calling process (root): sockets are made inside the namespace and
keep working from outside it. Bound to device and address like the agent's UDP
transport, so packets take the per-NIC policy routes through the fabric.
"""

from __future__ import annotations

import json
import select
import socket
import statistics
import struct
import subprocess
import time
from dataclasses import dataclass, field

from . import layout as L
from . import netns

MAGIC = b"HMFD"
_HEADER = struct.Struct("!4sHIq")  # magic, sport, sequence, send time (ns, CLOCK_REALTIME)
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


@dataclass
class PortStats:
    sent: int = 0
    received: int = 0
    delays_ns: list[int] = field(default_factory=list)

    @property
    def lost(self) -> int:
        return self.sent - self.received

    def median_ms(self) -> float | None:
        return statistics.median(self.delays_ns) / 1e6 if self.delays_ns else None


def _socket(dev: str, ip: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev.encode())
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind((ip, port))
    return sock


def measure(ns: str, src: tuple[str, str], dst: tuple[str, str], sports: list[int],
            count: int, interval: float = 0.001, wait: float = 0.5,
            dport: int = L.PROBE_DST_PORT) -> dict[int, PortStats]:
    """`count` rounds, each one packet per source port, `interval` s apart;
    then `wait` s for late packets. src and dst are (device, address)."""
    with netns.entered(ns):
        receiver = _socket(dst[0], dst[1], dport)
        receiver.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        senders = {p: _socket(src[0], src[1], p) for p in sports}
    stats = {p: PortStats() for p in sports}
    try:
        next_round = time.monotonic()
        for seq in range(count):
            for port, sock in senders.items():
                sock.sendto(_HEADER.pack(MAGIC, port, seq, time.clock_gettime_ns(
                    time.CLOCK_REALTIME)) + bytes(30), (dst[1], dport))
                stats[port].sent += 1
            next_round += interval
            _drain(receiver, stats, next_round)
        _drain(receiver, stats, time.monotonic() + wait)
    finally:
        receiver.close()
        for sock in senders.values():
            sock.close()
    return stats


def _drain(receiver: socket.socket, stats: dict[int, PortStats], until: float) -> None:
    while True:
        timeout = max(0.0, until - time.monotonic())
        if not select.select([receiver], [], [], timeout)[0]:
            return
        data, anc, _, _ = receiver.recvmsg(2048, socket.CMSG_SPACE(16))
        if len(data) < _HEADER.size:
            continue
        magic, port, _, sent_ns = _HEADER.unpack_from(data)
        if magic != MAGIC or port not in stats:
            continue
        stats[port].received += 1
        for level, kind, value in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", value[:16])
                stats[port].delays_ns.append(sec * 1_000_000_000 + nsec - sent_ns)


def total(stats: dict[int, PortStats]) -> PortStats:
    out = PortStats()
    for s in stats.values():
        out.sent += s.sent
        out.received += s.received
        out.delays_ns += s.delays_ns
    return out


def ports_by_path(lay: L.Layout, src_ip: str, dst_ip: str, sports) -> dict[int, list[str]]:
    """The devices each source port's packets cross today (truth.path)."""
    from . import truth  # only the tests' side needs it
    return {p: [hop.device for hop in truth.path(lay, src_ip, dst_ip, p)] for p in sports}


def fabric_state(namespaces: list[str]) -> dict[str, dict]:
    """Everything a fault may change, per namespace: routes, rules, links (admin
    and carrier state, qdisc), qdiscs and nftables. Equal before a fault and
    after its clear means the fabric was restored exactly."""
    def run(*argv: str) -> str:
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout

    out = {}
    for ns in namespaces:
        nft = json.loads(run("ip", "netns", "exec", ns, "nft", "-j", "list", "ruleset"))
        out[ns] = {
            "routes": sorted(json.dumps(r, sort_keys=True)
                             for r in netns.ip_json(ns, "route", "show", "table", "all")),
            "rules": netns.ip_json(ns, "rule", "show"),
            "links": netns.ip_json(ns, "link", "show"),
            "qdiscs": json.loads(run("tc", "-n", ns, "-j", "qdisc", "show") or "[]"),
            "nft": [item for item in nft["nftables"] if "metainfo" not in item],
        }
    return out
