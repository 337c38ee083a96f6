"""ECMP in 4x4x4 fabrics (one pod, then two): source ports spread over every
spine, a fixed 5-tuple keeps its path, and truth-path names the spine that
actually counted the packets and the hops traceroute sees. Needs root."""

import select
import socket
import unittest

import harness
from hmfabric import layout as L
from hmfabric import netns, truth

IP_RECVERR = getattr(socket, "IP_RECVERR", 11)
MSG_ERRQUEUE = getattr(socket, "MSG_ERRQUEUE", 0x2000)


def spine_of(hops):
    return next(h.device for h in hops if h.device.startswith("s"))


class EcmpCase(unittest.TestCase):
    size = (4, 4, 4, 1)
    host = 2

    @classmethod
    def setUpClass(cls):
        cls.fab = harness.Fabric(*cls.size).up()
        cls.lay = cls.fab.layout

    @classmethod
    def tearDownClass(cls):
        cls.fab.down()

    def send_counted(self, sports, src_rail, dst_rail, count=1):
        """Probes sports; returns {sport: spine that forwarded it}."""
        for spine in self.lay.spines:
            harness.watch_udp(self.fab.ns(spine))
        got = self.fab.probe(self.host, src_rail, dst_rail, sports, count=count)
        self.assertEqual({p: g["received"] for p, g in got.items()},
                         {p: count for p in sports})
        where = {}
        for spine in self.lay.spines:
            for sport, packets in harness.udp_sports_seen(self.fab.ns(spine)).items():
                self.assertNotIn(sport, where, f"{sport} crossed two spines")
                self.assertEqual(packets, count)
                where[sport] = spine
        return where

    def truth_spine(self, sport, src_rail, dst_rail):
        hops = truth.path(self.lay, self.fab.nic_ip(self.host, src_rail),
                          self.fab.nic_ip(self.host, dst_rail), sport)
        return spine_of(hops)


class OnePod(EcmpCase):
    def test_source_ports_spread_over_every_spine_as_truth_path_predicts(self):
        sports = list(range(20000, 20064))
        where = self.send_counted(sports, 0, 3)
        self.assertEqual(set(where), set(sports))
        self.assertEqual(set(where.values()), set(self.lay.spines))
        for sport in sports:
            self.assertEqual(where[sport], self.truth_spine(sport, 0, 3), sport)

    def test_fixed_five_tuple_keeps_its_path(self):
        seen = [self.send_counted([33333], 1, 2, count=5)[33333] for _ in range(3)]
        self.assertEqual(len(set(seen)), 1, seen)
        self.assertEqual(seen[0], self.truth_spine(33333, 1, 2))

    def test_truth_path_cli_matches_traceroute_hops(self):
        src, dst = self.fab.nic_ip(self.host, 0), self.fab.nic_ip(self.host, 1)
        for sport in (40001, 40002, 40003):
            out = harness.fabric("truth-path", src, dst, str(sport)).stdout
            rows = [line.split() for line in out.splitlines()[1:]]
            self.assertEqual(len(rows), 5)
            hops = [self.hop_answering(sport, ttl) for ttl in range(1, 5)]
            self.assertEqual(hops, [row[2] for row in rows[1:]], out)

    def hop_answering(self, sport, ttl):
        """The address an ICMP error for this 5-tuple at `ttl` comes from."""
        src, dst = self.fab.nic_ip(self.host, 0), self.fab.nic_ip(self.host, 1)
        with netns.entered(self.fab.ns(L.host_name(self.host))):
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        with sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"nic0")
            sock.setsockopt(socket.IPPROTO_IP, IP_RECVERR, 1)
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, ttl)
            sock.bind((src, sport))
            sock.sendto(b"x" * 32, (dst, L.PROBE_DST_PORT))
            if not select.select([sock], [], [], 2)[0]:  # a queued error reads as readable
                self.fail(f"no ICMP error for sport {sport} ttl {ttl}")
            _, anc, _, _ = sock.recvmsg(512, 512, MSG_ERRQUEUE)
        err = next(data for level, kind, data in anc if kind == IP_RECVERR)
        return socket.inet_ntoa(err[16 + 4:16 + 8])  # sock_extended_err, then the offender


class TwoPods(EcmpCase):
    size = (4, 2, 2, 2)
    host = 3  # in pod 1

    def test_pod_hosts_use_their_own_rail_switches(self):
        sports = list(range(21000, 21016))
        where = self.send_counted(sports, 0, 1)
        self.assertEqual(set(where.values()), set(self.lay.spines))
        hops = truth.path(self.lay, self.fab.nic_ip(3, 0), self.fab.nic_ip(3, 1), 21000)
        self.assertEqual([h.device for h in hops][1::2], ["p1r0", "p1r1"])
        got = self.fab.probe(3, 1, 0, [21000])[21000]
        self.assertEqual(got["ttl"], 61)

    def test_spines_reach_every_nic_of_every_pod(self):
        src = self.fab.nic_ip(0, 0)
        for link in self.lay.nic_links:
            hops = truth.path(self.lay, src, link.a.ip, 5555)
            self.assertEqual(hops[-1].device, L.device_of(link.a), link.name)


if __name__ == "__main__":
    harness.main()
