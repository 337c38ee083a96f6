#!/usr/bin/env python3
"""e2e 5: a bad ACL on one rail-to-spine link (p0r3-s02) dropping every UDP
packet of one source port to the probe port, both ways (`fabric fault add
blackhole --sport P`), on an 8x4x4 fabric with real agents and the real
analyzer: within 3 windows after the injection that link is ranked first and
a culprit, and no RNIC is anomalous (each NIC loses at most 3 of its 48
5-tuples, about 6% of its probes); its incident is diagnosed acl (the
blackholed port loses every probe through the link, the others none).

Which port. By default an agent draws its 16 ports at random from
49152-65535 and rotates them: a given port is used by one NIC at most, and
its few failing 5-tuples cross that NIC's own link as much as the bad one, so
no analyzer could tell which link drops them. Here the agents probe from
exactly 16 ports, 49152-49167 (`fabric start --agent-ports`), their whole
pool, so every NIC probes every pair with every port all the time, as RoCE
traffic from a configured port range would; and the test blackholes the port
that most probes carried across the link while the fabric was healthy
(counted by nftables in p0r3 before the injection): about a dozen 5-tuples
of most hosts, up and down, whose only common link is the bad one."""

import json
import subprocess
import unittest

import e2e

LINK, RAIL_SWITCH, SPINE = "p0r3-s02", "p0r3", "s02"
PORTS = (49152, 49167)
COUNT = """table ip hme2e {{
  set sports {{ type inet_service; flags dynamic; counter; }}
  chain count {{
    type filter hook forward priority -10; policy accept;
    oifname "{spine}" udp dport 4791 add @sports {{ udp sport }}
    iifname "{spine}" udp dport 4791 add @sports {{ udp sport }}
  }}
}}
"""


def nft(ns: str, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["ip", "netns", "exec", ns, "nft", *args], input=stdin, text=True,
                          capture_output=True, check=True).stdout


class PortBlackhole(e2e.FabricTestCase):
    START_ARGS = ("--agent-ports", f"{PORTS[0]}-{PORTS[1]}")

    def busiest_port(self, ns: str) -> tuple[int, dict[int, int]]:
        """The source port most probes carried across the link since counting began."""
        out = json.loads(nft(ns, "-j", "list", "set", "ip", "hme2e", "sports"))
        nft(ns, "delete", "table", "ip", "hme2e")
        [sports] = [item["set"] for item in out["nftables"] if "set" in item]
        seen = {e["elem"]["val"]: e["elem"]["counter"]["packets"] for e in sports.get("elem", [])}
        self.assertTrue(seen and all(PORTS[0] <= p <= PORTS[1] for p in seen),
                        f"probes across {LINK} by source port: {seen}")
        return max(seen, key=seen.get), seen

    def test_one_port_blackholed_link_found_no_rnic_blamed(self):
        ns = self.fab.ns(RAIL_SWITCH)
        nft(ns, "-f", "-", stdin=COUNT.format(spine=SPINE))
        healthy = self.wait_healthy_window()
        port, seen = self.busiest_port(ns)
        e2e.log(f"probe packets across {LINK} by source port: {dict(sorted(seen.items()))}; "
                f"blackholing {port}")
        t = self.inject("blackhole", "--link", LINK, "--sport", str(port))
        bound = self.windows_after(t, 3)
        first_ranked = []
        blamed_rnics = []
        false = []
        for snap in self.windows_until(bound, self.deadline_for(bound)):
            false += e2e.false_verdicts(snap, {LINK} if snap.end_s > t else set(),
                                        healthy.start_s)
            if snap.end_s <= t:
                continue  # judged before the fault
            if snap.links and e2e.link_name(snap.links[0]) == LINK and snap.links[0]["culprit"]:
                first_ranked.append(snap.end_s)
            blamed_rnics += [f"{r['host']}.nic{r['nic']} ({r['state']})"
                             for r in snap.anomalous_rnics()]
            last = snap
        self.assertTrue(first_ranked, f"{LINK} (source port {port} blackholed) not ranked first "
                                      f"within 3 windows; last: {last.describe()}")
        self.assertEqual(e2e.link_name(last.links[0]), LINK, last.describe())
        self.assertEqual(blamed_rnics, [], "RNICs marked anomalous for a one-port ACL")
        self.assertEqual(sorted(set(false)), [], "blamed in some window beside the faulty link")
        mine = [i for i in last.incidents["open"]
                if "link" in i["suspect"] and e2e.link_name(i["suspect"]) == LINK]
        self.assertTrue(mine, last.describe())
        e2e.log(f"diagnosis: {mine[0]['diagnosis']}")
        self.assertEqual(mine[0]["diagnosis"]["type"], "acl", mine[0]["diagnosis"])


if __name__ == "__main__":
    e2e.main()
