"""Send UDP probes between two NICs of one host and see which arrive.

Runs inside the host's namespace (`ip netns exec NS python3 -m hmfabric.udp_probe`)
with one socket per NIC, bound to the NIC's device and address like the agent's
UDP transport, so the probes take the same per-NIC policy routes through the
fabric. Prints one JSON object: per source port, how many arrived and the TTL
they arrived with.
"""

from __future__ import annotations

import argparse
import json
import select
import socket
import struct
import sys
import time

IP_RECVTTL = getattr(socket, "IP_RECVTTL", 12)
IP_TTL_CMSG = getattr(socket, "IP_TTL", 2)
MAGIC = b"HMFP"


def bound_socket(dev: str, ip: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev.encode())
    sock.bind((ip, port))
    return sock


def run(src_dev: str, src_ip: str, dst_dev: str, dst_ip: str, dport: int, sports: list[int],
        count: int, interval: float, wait: float) -> dict:
    receiver = bound_socket(dst_dev, dst_ip, dport)
    receiver.setsockopt(socket.IPPROTO_IP, IP_RECVTTL, 1)
    senders = {p: bound_socket(src_dev, src_ip, p) for p in sports}
    stats = {p: {"sent": 0, "received": 0, "ttl": None} for p in sports}

    def drain(deadline: float) -> None:
        while True:
            timeout = max(0.0, deadline - time.monotonic())
            if not select.select([receiver], [], [], timeout)[0]:
                return
            data, anc, _, _ = receiver.recvmsg(2048, socket.CMSG_SPACE(4))
            if len(data) < 6 or not data.startswith(MAGIC):
                continue
            sport = struct.unpack("!H", data[4:6])[0]
            if sport not in stats:
                continue
            stats[sport]["received"] += 1
            for level, kind, value in anc:
                if level == socket.IPPROTO_IP and kind == IP_TTL_CMSG:
                    stats[sport]["ttl"] = struct.unpack("i", value[:4])[0]

    for _ in range(count):
        for port, sock in senders.items():
            sock.sendto(MAGIC + struct.pack("!H", port) + bytes(44), (dst_ip, dport))
            stats[port]["sent"] += 1
        drain(time.monotonic() + interval)
    drain(time.monotonic() + wait)
    return {"src_ip": src_ip, "dst_ip": dst_ip, "dport": dport,
            "ports": [{"sport": p, **s} for p, s in stats.items()]}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src-dev", required=True)
    ap.add_argument("--src-ip", required=True)
    ap.add_argument("--dst-dev", required=True)
    ap.add_argument("--dst-ip", required=True)
    ap.add_argument("--dport", type=int, default=4791)
    ap.add_argument("--sports", required=True, help="comma-separated source ports")
    ap.add_argument("--count", type=int, default=1, help="probes per source port")
    ap.add_argument("--interval", type=float, default=0.001, help="seconds between rounds")
    ap.add_argument("--wait", type=float, default=0.5, help="seconds to wait for stragglers")
    args = ap.parse_args(argv)
    sports = [int(p) for p in args.sports.split(",") if p]
    result = run(args.src_dev, args.src_ip, args.dst_dev, args.dst_ip, args.dport, sports,
                 args.count, args.interval, args.wait)
    json.dump(result, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
