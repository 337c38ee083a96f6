"""Pure tests of the testbed's data: names and addresses (layout), the commands
`fabric up` would run (build), inventory and agent-config output, and the
truth-path walk over a fake FIB. No root, no namespaces."""

import ipaddress
import os
import sys
import unittest
from collections import Counter

sys.path.insert(0, os.path.join(os.environ.get("HOSTMESH_SOURCE_DIR") or os.path.join(
    os.path.dirname(__file__), "..", ".."), "deploy", "testbed"))

from hmfabric import build, inventory, truth  # noqa: E402
from hmfabric import layout as L  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ctest_unittest  # noqa: E402

try:
    import yaml  # python3-yaml, only to cross-check the hand-written emitter
except ImportError:
    yaml = None


def all_ips(lay):
    return [end.ip for link in lay.links for end in (link.a, link.b)]


class LayoutNames(unittest.TestCase):
    def test_small_fabric_names_and_addresses(self):
        lay = L.build_layout(L.Size(2, 2, 2), "x-")
        self.assertEqual(lay.hosts, ["h000", "h001"])
        self.assertEqual(lay.rail_switches, ["p0r0", "p0r1"])
        self.assertEqual(lay.spines, ["s00", "s01"])
        self.assertEqual(lay.namespaces, ["x-h000", "x-h001", "x-p0r0", "x-p0r1", "x-s00",
                                          "x-s01", "x-mgmt"])
        nic = lay.nic_link(1, 1)  # idx = r*H + h = 3
        self.assertEqual((nic.a.device, nic.a.ifname, nic.a.ip),
                         ("h001.nic1", "nic1", "198.18.0.7"))
        self.assertEqual((nic.b.device, nic.b.ifname, nic.b.ip), ("p0r1", "h001", "198.18.0.6"))
        self.assertEqual(nic.name, "h001.nic1-p0r1")
        fab = lay.fabric_link(0, 1, 1)  # idx = (p*R + r)*S + s = 3
        self.assertEqual((fab.a.device, fab.a.ifname, fab.a.ip), ("p0r1", "s01", "198.19.0.6"))
        self.assertEqual((fab.b.device, fab.b.ifname, fab.b.ip), ("s01", "p0r1", "198.19.0.7"))
        self.assertEqual(L.mgmt_ip(1), "198.19.129.1")
        self.assertEqual(L.nic_table(1), 101)

    def test_deterministic(self):
        size = L.Size(32, 8, 8, 4)
        self.assertEqual(L.build_layout(size), L.build_layout(size))

    def test_pods_attach_hosts_to_their_own_rail_switches(self):
        lay = L.build_layout(L.Size(8, 2, 3, 2))
        self.assertEqual(lay.nic_link(3, 1).b.device, "p0r1")
        self.assertEqual(lay.nic_link(4, 1).b.device, "p1r1")
        self.assertEqual(list(lay.pod_hosts(1)), [4, 5, 6, 7])
        spine_ports = {link.b.ifname for link in lay.fabric_links if link.b.device == "s02"}
        self.assertEqual(spine_ports, set(lay.rail_switches))

    def test_no_duplicate_addresses(self):
        for size in (L.Size(2, 2, 2), L.Size(32, 8, 8, 4), L.Size(4096, 8, 16, 8)):
            lay = L.build_layout(size)
            ips = all_ips(lay) + [L.mgmt_ip(h) for h in range(size.hosts)] + [L.ANALYZER_IP]
            dupes = [ip for ip, n in Counter(ips).items() if n > 1]
            self.assertEqual(dupes, [], size)

    def test_address_ranges_do_not_overlap(self):
        lay = L.build_layout(L.Size(4096, 8, 16, 8))  # the most NIC links there can be
        nic_net, fabric_net = ipaddress.ip_network("198.18.0.0/16"), ipaddress.ip_network(
            "198.19.0.0/17")
        for link in lay.links:
            net = nic_net if link.kind == "nic" else fabric_net
            self.assertIn(ipaddress.ip_address(link.a.ip), net)
            self.assertNotIn(ipaddress.ip_address(link.a.ip), L.MGMT_NET)
        self.assertIn(ipaddress.ip_address(L.mgmt_ip(4095)), L.MGMT_NET)

    def test_size_validation(self):
        bad = [L.Size(0, 2, 2), L.Size(2, 1, 2), L.Size(2, 2, 0), L.Size(3, 2, 2, 2),
               L.Size(4097, 8, 2), L.Size(2, 8, 2049), L.Size(2, 2, 2, 0)]
        for size in bad:
            with self.assertRaises(L.LayoutError, msg=size) as ctx:
                L.build_layout(size)
            self.assertRegex(str(ctx.exception), "--|x", size)

    def test_namespace_claims(self):
        self.assertTrue(L.is_fabric_namespace("hm-h000"))
        self.assertTrue(L.is_fabric_namespace("hm-p1r7"))
        self.assertTrue(L.is_fabric_namespace("hm-s00"))
        self.assertTrue(L.is_fabric_namespace("hm-mgmt"))
        self.assertFalse(L.is_fabric_namespace("hm-x-h000"))  # another fabric's
        self.assertFalse(L.is_fabric_namespace("hm-probe"))
        self.assertFalse(L.is_fabric_namespace("h000"))

    def test_peers_and_lookups(self):
        lay = L.build_layout(L.Size(2, 2, 2))
        self.assertEqual(lay.peer("h000", "nic1"), lay.nic_link(0, 1).b)
        self.assertEqual(lay.peer("p0r0", "s01").device, "s01")
        self.assertEqual(lay.peer("s01", "p0r0").ip, lay.fabric_link(0, 0, 1).a.ip)
        self.assertEqual(lay.host_index("h001"), 1)
        with self.assertRaises(L.LayoutError):
            lay.host_index("h002")
        with self.assertRaises(L.LayoutError):
            lay.peer("h000", "nic9")


class BuildCommands(unittest.TestCase):
    def setUp(self):
        self.lay = L.build_layout(L.Size(8, 4, 3, 2), "t-")
        self.cmds = build.namespace_commands(self.lay)

    def test_every_namespace_configured_and_every_address_once(self):
        self.assertEqual(set(self.cmds), set(self.lay.namespaces))
        added = [c.split()[2].split("/")[0] for cmds in self.cmds.values() for c in cmds
                 if c.startswith("address add")]
        expected = all_ips(self.lay) + [L.mgmt_ip(h) for h in range(8)] + [L.ANALYZER_IP]
        self.assertEqual(sorted(added), sorted(expected))

    def test_one_veth_per_link_and_host(self):
        veths = build.veth_commands(self.lay)
        self.assertEqual(len(veths), len(self.lay.links) + len(self.lay.hosts))
        self.assertTrue(all(c.startswith("link add ") and " type veth " in c for c in veths))

    def test_spines_route_every_nic_to_its_rail_switch(self):
        for s, spine in enumerate(self.lay.spines):
            routes = [c.split() for c in self.cmds["t-" + spine] if c.startswith("route add")]
            for link in self.lay.nic_links:
                ip = ipaddress.ip_address(link.a.ip)
                hits = [r for r in routes if ip in ipaddress.ip_network(r[2])]
                self.assertEqual(len(hits), 1, (spine, link.name))
                p = int(link.b.device[1:].split("r")[0])
                r = int(link.b.device.split("r")[1])
                self.assertEqual(hits[0][4], self.lay.fabric_link(p, r, s).a.ip)

    def test_host_policy_routing(self):
        cmds = self.cmds["t-h005"]
        self.assertIn(f"rule add from {self.lay.nic_link(5, 2).a.ip} iif lo lookup 102 pref 102",
                      cmds)
        self.assertIn("rule add oif nic2 lookup 102 pref 202", cmds)
        self.assertLess(cmds.index("rule add lookup local pref 1000"),
                        cmds.index("rule del pref 0 lookup local"))

    def test_switch_sysctls(self):
        plain = build.switch_sysctls(build.Options(hash_seed=9))
        self.assertEqual(plain["net.ipv4.fib_multipath_hash_seed"], "9")
        self.assertEqual(plain["net.ipv4.fib_multipath_hash_policy"], "3")
        self.assertNotIn("net.ipv4.icmp_ratelimit", plain)
        loud = build.switch_sysctls(build.Options(icmp_unlimited=True))
        self.assertEqual(loud["net.ipv4.icmp_ratelimit"], "0")


AGENT_CONFIG_H003 = """\
# hostmesh agent config for h003, generated by `fabric agent-config h003`
host: h003
log_level: info
transport: udp
analyzer:
  address: 198.19.128.1:50051
  insecure: true
metrics:
  listen: 198.19.129.3:9100
probe:
  interval: 100ms
  timeout: 500ms
  payload_bytes: 50
  dst_port: 4791
ports:
  pool_size: 16
  rotation_period: 60s
  rotation_fraction: 0.25
traceroute:
  enabled: true
  rate_per_second: 40
  per_switch_rate_per_second: 5
  max_ttl: 8
  refresh_period: 240s
upload:
  batch_max_results: 1000
  batch_max_age: 1s
  buffer_budget: 64MiB
protect:
  signals:
    - cgroup_cpu
    - cgroup_memory
    - cgroup_throttled
nics:
  - name: nic0
    rail: 0
    ip: 198.18.0.7
    netdev: nic0
  - name: nic1
    rail: 1
    ip: 198.18.0.15
    netdev: nic1
"""


class Inventory(unittest.TestCase):
    def test_agent_config_text(self):
        lay = L.build_layout(L.Size(4, 2, 2))
        text = inventory.to_yaml(inventory.agent_config(lay, "h003"),
                                 inventory.agent_config_header("h003"))
        self.assertEqual(text, AGENT_CONFIG_H003)

    def test_agent_config_port_range(self):
        lay = L.build_layout(L.Size(4, 2, 2))
        text = inventory.to_yaml(inventory.agent_config(lay, "h003", (49152, 49167)),
                                 inventory.agent_config_header("h003"))
        self.assertIn("ports:\n  pool_size: 16\n  rotation_period: 60s\n  rotation_fraction: "
                      "0.25\n  min: 49152\n  max: 49167\ntraceroute:", text)

    def test_scalars_that_need_quotes(self):
        out = inventory.to_yaml({"a": "true", "b": "0x37", "c": "1.5", "d": "1:30", "e": "a b",
                                 "f": "198.18.0.1", "g": "hm-", "h": "", "i": 'q"'})
        self.assertEqual(out, 'a: "true"\nb: "0x37"\nc: "1.5"\nd: "1:30"\ne: "a b"\n'
                              'f: 198.18.0.1\ng: hm-\nh: ""\ni: "q\\""\n')

    def test_inventory_lists_every_link_and_interface(self):
        lay = L.build_layout(L.Size(4, 2, 2, 2))
        inv = inventory.inventory(lay)
        self.assertEqual([link["name"] for link in inv["links"]], [k.name for k in lay.links])
        ifaces = [i["ip"] for sw in inv["switches"] for i in sw["interfaces"]]
        nics = [n["ip"] for h in inv["hosts"] for n in h["nics"]]
        self.assertEqual(sorted(ifaces + nics), sorted(all_ips(lay)))
        self.assertEqual(inv["hosts"][3]["nics"][1]["switch"], "p1r1")

    @unittest.skipIf(yaml is None, "python3-yaml not installed")
    def test_yaml_reads_back_as_the_same_data(self):
        lay = L.build_layout(L.Size(4, 2, 2, 2))
        for data in (inventory.inventory(lay), inventory.agent_config(lay, "h001")):
            self.assertEqual(yaml.safe_load(inventory.to_yaml(data, ["header"])), data)


class TruthPath(unittest.TestCase):
    """truth.path over a scripted FIB: (namespace, iif) -> route."""

    def setUp(self):
        self.lay = L.build_layout(L.Size(2, 2, 2), "t-")

    def walk(self, fib):
        def route_get(ns, dst, src, iif, sport, dport):
            return fib[(ns, iif)]
        return truth.path(self.lay, "198.18.0.1", "198.18.0.5", 1000, route_get=route_get)

    def test_follows_hops_to_the_destination(self):
        fib = {("t-h000", None): {"dev": "nic0", "gateway": "198.18.0.0"},
               ("t-p0r0", "h000"): {"dev": "s01", "gateway": "198.19.0.3"},
               ("t-s01", "p0r0"): {"dev": "p0r1", "gateway": "198.19.0.6"},
               ("t-p0r1", "s01"): {"dev": "h000"},
               ("t-h000", "nic1"): {"type": "local", "dev": "lo"}}
        hops = self.walk(fib)
        self.assertEqual([(h.device, h.ingress_if, h.ingress_ip, h.egress_if) for h in hops], [
            ("h000", None, None, "nic0"), ("p0r0", "h000", "198.18.0.0", "s01"),
            ("s01", "p0r0", "198.19.0.3", "p0r1"), ("p0r1", "s01", "198.19.0.6", "h000"),
            ("h000", "nic1", "198.18.0.5", None)])
        self.assertIn("p0r0      h000", truth.format_hops(hops))

    def test_loop_is_an_error(self):
        fib = {("t-h000", None): {"dev": "nic0"}, ("t-p0r0", "h000"): {"dev": "s00"},
               ("t-s00", "p0r0"): {"dev": "p0r0"}, ("t-p0r0", "s00"): {"dev": "s00"}}
        with self.assertRaisesRegex(RuntimeError, "loop"):
            self.walk(fib)

    def test_source_must_be_a_host_nic(self):
        with self.assertRaises(L.LayoutError):
            truth.path(self.lay, "198.18.0.0", "198.18.0.5", 1, route_get=None)


if __name__ == "__main__":
    ctest_unittest.main()
