"""Faults that drop packets, measured on a 2 hosts x 2 rails x 2 spines fabric:
loss, switch-loss, gray, blackhole, link-down, nic-down, nic-flap. Each test injects one
fault, checks its effect on UDP flows that do and do not cross it (paths from
truth-path), checks `fault list`, clears it and checks the fabric is exactly
as before. Needs root; exits 77 (skipped) otherwise.
"""

import json
import time
import unittest

import harness
from hmfabric import fault_probe as fp
from hmfabric import netns

SPORTS = range(40000, 40080)
LINK = "p0r0-s00"  # h000.nic0 -> h000.nic1 crosses it when p0r0 hashes the flow to s00


def fault(*args: str) -> str:
    return harness.fabric("fault", *args).stdout.strip()


class DropFaults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fab = harness.Fabric(hosts=2, rails=2, spines=2).up()
        lay = cls.fab.layout
        cls.nic0, cls.nic1 = lay.nic_link(0, 0).a, lay.nic_link(0, 1).a
        cls.ns = cls.fab.ns("h000")
        up = fp.ports_by_path(lay, cls.nic0.ip, cls.nic1.ip, SPORTS)
        down = fp.ports_by_path(lay, cls.nic1.ip, cls.nic0.ip, SPORTS)
        # Forward flows (nic0 -> nic1) through s00 cross p0r0 -> s00; reverse
        # flows (nic1 -> nic0) through s00 cross s00 -> p0r0.
        cls.fwd_via = [p for p, hops in up.items() if "s00" in hops][:20]
        cls.fwd_other = [p for p, hops in up.items() if "s00" not in hops][:20]
        cls.rev_via = [p for p, hops in down.items() if "s00" in hops][:20]
        assert len(cls.fwd_via) == len(cls.fwd_other) == len(cls.rev_via) == 20, (up, down)
        cls.clean = fp.fabric_state(lay.namespaces)

    @classmethod
    def tearDownClass(cls):
        cls.fab.down()

    def tearDown(self):
        fault("clear")
        self.assertRestored()

    def assertRestored(self):
        """Every namespace as it was before any fault (carrier settles at once on
        veths, but give the kernel a moment)."""
        deadline = time.monotonic() + 3
        while (now := fp.fabric_state(self.fab.layout.namespaces)) != self.clean:
            if time.monotonic() > deadline:
                diff = {ns: [k for k in now[ns] if now[ns][k] != self.clean[ns][k]]
                        for ns in now if now[ns] != self.clean[ns]}
                self.fail(f"fabric not restored, differs in {diff}")
            time.sleep(0.1)

    def forward(self, sports, count):
        return fp.measure(self.ns, ("nic0", self.nic0.ip), ("nic1", self.nic1.ip), sports, count,
                          interval=0.0005, wait=0.3)

    def reverse(self, sports, count):
        return fp.measure(self.ns, ("nic1", self.nic1.ip), ("nic0", self.nic0.ip), sports, count,
                          interval=0.0005, wait=0.3)

    def listed(self) -> list[dict]:
        return json.loads(fault("list", "--counters"))

    def test_loss_drops_its_share_on_crossing_flows_only(self):
        fid = fault("add", "loss", "--link", LINK, "--percent", "5")
        via = fp.total(self.forward(self.fwd_via, 100))  # 2000 packets
        other = fp.total(self.forward(self.fwd_other, 100))
        print(f"\nloss 5%: {via.lost}/{via.sent} lost crossing, {other.lost}/{other.sent} not")
        self.assertEqual(via.sent, 2000)
        self.assertTrue(0.03 * via.sent <= via.lost <= 0.07 * via.sent, via.lost)
        self.assertEqual(other.lost, 0)
        [entry] = self.listed()
        self.assertEqual((entry["id"], entry["kind"], entry["params"]["percent"]), (fid, "loss", 5))
        self.assertEqual(entry["links"], [LINK])
        ends = {(t["device"], t["ifname"], t["namespace"]) for t in entry["targets"]}
        self.assertEqual(ends, {("p0r0", "s00", self.fab.ns("p0r0")),
                                ("s00", "p0r0", self.fab.ns("s00"))})
        # Ground truth to the packet: the rule's counter saw exactly the lost ones.
        self.assertEqual(entry["matched_packets"][f"{self.fab.ns('p0r0')}/{fid}_egress"], via.lost)

    def test_switch_loss_drops_its_share_of_everything_the_switch_forwards(self):
        fid = fault("add", "switch-loss", "--switch", "s00", "--percent", "20")
        up = fp.total(self.forward(self.fwd_via, 100))  # 2000 packets, p0r0 -> s00 -> p0r1
        down = fp.total(self.reverse(self.rev_via, 100))  # p0r1 -> s00 -> p0r0
        other = fp.total(self.forward(self.fwd_other, 100))  # through s01
        print(f"\nswitch-loss 20% on s00: {up.lost}/{up.sent} and {down.lost}/{down.sent} lost "
              f"through it (both ways), {other.lost}/{other.sent} through s01")
        for through in (up, down):  # 400 expected, +-5 standard deviations
            self.assertTrue(300 <= through.lost <= 500, through.lost)
        self.assertEqual(other.lost, 0)
        [entry] = self.listed()
        self.assertEqual((entry["id"], entry["kind"], entry["params"]),
                         (fid, "switch-loss", {"switch": "s00", "percent": 20}))
        self.assertEqual(entry["targets"], [{"role": "forward", "device": "s00",
                                             "namespace": self.fab.ns("s00")}])
        self.assertEqual(entry["links"], [])
        self.assertEqual(entry["matched_packets"], {f"{self.fab.ns('s00')}/{fid}_forward":
                                                   up.lost + down.lost})

    def test_gray_drops_everything_one_way_and_link_stays_up(self):
        fault("add", "gray", "--link", LINK, "--from", "p0r0")
        via = fp.total(self.forward(self.fwd_via, 10))
        other = fp.total(self.forward(self.fwd_other, 10))
        back = fp.total(self.reverse(self.rev_via, 10))
        print(f"\ngray: {via.lost}/{via.sent} lost crossing, {other.lost}/{other.sent} not, "
              f"{back.lost}/{back.sent} the other way")
        self.assertEqual(via.received, 0)
        self.assertEqual(other.lost, 0)
        self.assertEqual(back.lost, 0)  # --from p0r0: s00 -> p0r0 still works
        for device, ifname in (("p0r0", "s00"), ("s00", "p0r0")):
            self.assertIn("LOWER_UP", link_flags(self.fab.ns(device), ifname), device)
        [entry] = self.listed()
        self.assertEqual([t["device"] for t in entry["targets"]], ["p0r0"])

    def test_blackhole_drops_only_its_source_port(self):
        victim = self.fwd_via[0]
        fault("add", "blackhole", "--link", LINK, "--sport", str(victim))
        stats = self.forward(self.fwd_via, 20)
        print(f"\nblackhole {victim}: " + ", ".join(
            f"{p}:{s.received}/{s.sent}" for p, s in list(stats.items())[:4]) + ", ...")
        self.assertEqual(stats[victim].received, 0)
        for port in self.fwd_via[1:]:
            self.assertEqual(stats[port].lost, 0, port)
        [entry] = self.listed()
        self.assertEqual((entry["params"]["sport"], entry["params"]["dport"]), (victim, 4791))

    def test_link_down_blackholes_the_far_side_until_cleared(self):
        before = fp.total(self.reverse(self.rev_via, 5))
        self.assertEqual(before.lost, 0)
        fault("add", "link-down", "--link", LINK)
        for device, ifname in (("p0r0", "s00"), ("s00", "p0r0")):
            self.assertNotIn("UP", link_flags(self.fab.ns(device), ifname), device)
        # p0r0 drops its dead nexthop (its own port is down), but p0r1 still
        # hashes flows to s00, which lost its route to rail 0: those vanish.
        back = fp.total(self.reverse(self.rev_via, 5))
        fwd = fp.total(self.forward(self.fwd_via, 5))
        print(f"\nlink-down: {back.lost}/{back.sent} lost from the far side, "
              f"{fwd.lost}/{fwd.sent} from the near side (rehashed)")
        self.assertEqual(back.received, 0)
        self.assertEqual(fwd.lost, 0)
        fault("clear")
        self.assertRestored()
        self.assertEqual(fp.total(self.reverse(self.rev_via, 5)).lost, 0)
        self.assertEqual(fp.ports_by_path(self.fab.layout, self.nic1.ip, self.nic0.ip,
                                          self.rev_via[:3]),
                         {p: ["h000", "p0r1", "s00", "p0r0", "h000"] for p in self.rev_via[:3]})

    def test_nic_down_stops_traffic_to_it_until_cleared(self):
        fault("add", "nic-down", "--host", "h000", "--nic", "nic1")
        self.assertNotIn("UP", link_flags(self.ns, "nic1"))
        lost = fp.total(self.forward(self.fwd_via + self.fwd_other, 3))
        print(f"\nnic-down: {lost.lost}/{lost.sent} lost")
        self.assertEqual(lost.received, 0)
        [entry] = self.listed()
        self.assertEqual(entry["targets"][0]["link"], "h000.nic1-p0r1")
        fault("clear")
        self.assertRestored()
        self.assertEqual(fp.total(self.forward(self.fwd_via + self.fwd_other, 3)).lost, 0)

    def test_nic_flap_toggles_and_clear_leaves_it_up(self):
        fault("add", "nic-flap", "--host", "h000", "--nic", "nic1", "--period", "0.3")
        # The link seen both down and up (polled: how long a poll takes on a busy
        # machine must not matter), and the worker's own log of its changes.
        seen = set()
        deadline = time.monotonic() + 10
        while seen != {True, False} and time.monotonic() < deadline:
            seen.add("UP" in link_flags(self.ns, "nic1"))
            time.sleep(0.05)
        self.assertEqual(seen, {True, False}, "the NIC never changed state within 10 s")
        [entry] = self.listed()
        [proc] = entry["processes"]
        self.assertTrue(proc["alive"])
        events = flap_events(proc["events"], 4, deadline=time.monotonic() + 10)
        print(f"\nnic-flap: {[e for _, e in events]} at +"
              + ", +".join(f"{t - events[0][0]:.2f}" for t, _ in events) + " s")
        self.assertEqual([e for _, e in events[:4]], ["down", "up", "down", "up"])
        # Changes are due PERIOD apart from the worker's start, never early: the
        # fourth comes 3 periods after the start, minus nothing, while the first
        # may itself be late by scheduling; a period of headroom for that. (A
        # worker that did not wait would make all four within milliseconds.)
        self.assertGreaterEqual(events[3][0] - events[0][0], 2 * 0.3)
        fault("clear")
        self.assertRestored()
        self.assertFalse(running(proc["pid"]))
        self.assertEqual(fp.total(self.forward(self.fwd_via, 3)).lost, 0)


def flap_events(path: str, want: int, deadline: float) -> list[tuple[float, str]]:
    """The first `want` (unix time, "down"|"up") lines of a nic-flap events log,
    waiting for them until `deadline` (monotonic); fewer if they never come."""
    while True:
        with open(path) as f:
            events = [(float(t), e) for t, e in (line.split() for line in f)]
        if len(events) >= want or time.monotonic() > deadline:
            return events
        time.sleep(0.1)


def link_flags(ns: str, ifname: str) -> list[str]:
    return netns.ip_json(ns, "link", "show", "dev", ifname)[0]["flags"]


def running(pid: int) -> bool:
    """Exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


if __name__ == "__main__":
    harness.main()
