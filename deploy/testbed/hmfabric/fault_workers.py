"""Background programs of faults, started detached by `fabric fault add`:

  flap   toggles an interface down and up every PERIOD seconds (nic-flap)
  blast  sends UDP at a fixed bit rate out of one interface (congestion)

    python3 -m hmfabric.fault_workers flap --ns NS --ifname IF --period S --events FILE
    ip netns exec NS python3 -m hmfabric.fault_workers blast --dev IF --src IP --dst IP \
        --rate-bps R

Each prints "ready" once set up (the fault counts from then) and stops on SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
import time

from . import fault_ops

BLAST_PORT = 9  # discard: the far end drops it in prerouting (see faults.py)
BLAST_PAYLOAD = 1200  # bytes of UDP payload; below the 1500-byte veth MTU
SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)
IP_RECVERR = getattr(socket, "IP_RECVERR", 11)


class _Stop(Exception):
    pass


def _raise_stop(signum, frame):  # noqa: ARG001
    raise _Stop()


def _ready() -> None:
    print("ready", flush=True)


def flap(ns: str, ifname: str, period: float, events: str) -> None:
    """Down now, up after PERIOD, down again after another PERIOD, ... Each up
    puts back the routes the down flushed (snapshot taken while up), so every
    up phase is the intact fabric. Transitions are appended to EVENTS as
    "<unix time> down|up" lines: the ground truth of when the NIC was down."""
    routes = fault_ops.routes_through(ns, ifname)
    _ready()
    with open(events, "a", buffering=1) as log:
        up = True
        next_change = time.monotonic()
        while True:
            time.sleep(max(0.0, next_change - time.monotonic()))
            up = not up
            try:
                fault_ops.link_set(ns, ifname, up=up)
                if up:
                    fault_ops.restore_routes(ns, routes)
            except fault_ops.FaultError as exc:  # keep flapping; clear restores anyway
                print(f"flap: {exc}", file=sys.stderr, flush=True)
            log.write(f"{time.time():.6f} {'up' if up else 'down'}\n")
            next_change += period


def blast(dev: str, src: str, dst: str, rate_bps: int) -> None:
    """Paced UDP: every millisecond sends what is due so far, so the mean rate is
    exact and bursts stay far below the shaper's bucket. Once the shaper refuses a
    packet, the queue's last gap (the limit is in bytes, rarely a multiple of the
    filler's size) is topped up with ever smaller packets, so the queue is full to
    the byte and a probe arriving then is dropped, whatever its size."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev.encode())
    # Packets waiting in the shaper count against the socket's send buffer: with the
    # default one the generator would stall before the shaper's queue is full (and
    # nothing would be dropped) at rates above ~50 Mbit/s.
    sock.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 16 << 20)
    # Without IP_RECVERR the kernel hides the qdisc's drop (ENOBUFS) from UDP.
    sock.setsockopt(socket.IPPROTO_IP, IP_RECVERR, 1)
    sock.setblocking(False)
    sock.bind((src, 0))
    wire_bits = (BLAST_PAYLOAD + 8 + 20 + 14) * 8  # UDP, IP and Ethernet headers
    pps = rate_bps / wire_bits
    _ready()
    start, sent = time.monotonic(), 0
    while True:
        due = int((time.monotonic() - start) * pps) - sent
        full = False
        for _ in range(due):
            full = not _send(sock, BLAST_PAYLOAD, dst) or full
        sent += max(due, 0)
        if full:
            _top_up(sock, dst)
        time.sleep(0.001)


def _send(sock: socket.socket, payload: int, dst: str) -> bool:
    try:
        sock.sendto(bytes(payload), (dst, BLAST_PORT))
        return True
    except OSError:  # queue full (ENOBUFS, EAGAIN) or link down: that is the point
        return False


def _top_up(sock: socket.socket, dst: str) -> None:
    """Halves the payload on each refusal: about 2 log2(1200) sends fill the gap
    to within one empty UDP packet (42 bytes on the wire)."""
    payload = BLAST_PAYLOAD // 2
    for _ in range(64):  # bounded: a fast shaper may drain as fast as this sends
        if payload == 0:
            break
        if not _send(sock, payload, dst):
            payload //= 2
    _send(sock, 0, dst)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="fault_workers", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="worker", required=True)
    p = sub.add_parser("flap")
    p.add_argument("--ns", required=True)
    p.add_argument("--ifname", required=True)
    p.add_argument("--period", type=float, required=True)
    p.add_argument("--events", required=True)
    p = sub.add_parser("blast")
    p.add_argument("--dev", required=True)
    p.add_argument("--src", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--rate-bps", type=int, required=True)
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _raise_stop)
    signal.signal(signal.SIGINT, _raise_stop)
    try:
        if args.worker == "flap":
            flap(args.ns, args.ifname, args.period, args.events)
        else:
            blast(args.dev, args.src, args.dst, args.rate_bps)
    except _Stop:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
