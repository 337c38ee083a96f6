"""Shared helpers of the testbed tests (tests/testbed/test_*.py).

    import harness                      # also puts deploy/testbed on sys.path
    from hmfabric import layout

    class T(unittest.TestCase):
        @classmethod
        def setUpClass(cls):
            cls.fab = harness.Fabric(hosts=2, rails=2, spines=2).up()
        @classmethod
        def tearDownClass(cls):
            cls.fab.down()

    if __name__ == "__main__":
        harness.main()                  # exit 77 (skipped) without root or netns

API
  main()                          unittest.main after require_netns(); a skip exits 77
  require_netns()                 exit 77 with the reason when namespaces can't be built
  PREFIX                          namespace prefix of this test process:
                                  $HOSTMESH_FABRIC_PREFIX (default "hm") + "t<pid>-"
  fabric(*args, check=True)       run `fabric` with PREFIX; CompletedProcess (text)
  Fabric(hosts, rails, spines, pods=1, flags=())
    .up() / .down()               `fabric up` with those flags / `fabric down`
    .layout                       the hmfabric.layout.Layout of that size and prefix
    .ns(device)                   namespace of a host or switch ("h000", "s01")
    .nic_ip(h, r)                 address of NIC r of host h
    .probe(h, src_rail, dst_rail, sports, count=1, dport=4791, wait=0.3)
                                  UDP from NIC src_rail to NIC dst_rail of host h, one
                                  socket per source port, bound like the agent's; returns
                                  {sport: {"sent", "received", "ttl"}} (hmfabric.udp_probe)
  watch_udp(ns, dport=4791)       count forwarded UDP to dport in ns, per source port (nft)
  udp_sports_seen(ns)             {sport: packets} since watch_udp(ns)
  link_counters(ns)               {ifname: {"rx_packets", "tx_packets", "rx_dropped", ...}}
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import unittest

SOURCE_DIR = os.environ.get("HOSTMESH_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
TESTBED_DIR = os.path.join(SOURCE_DIR, "deploy", "testbed")
FABRIC = os.path.join(TESTBED_DIR, "fabric")
# Whoever runs the tests picks the base (people and CI jobs on one machine each
# their own); the pid keeps two test processes of one run apart.
PREFIX = f"{os.environ.get('HOSTMESH_FABRIC_PREFIX') or 'hm'}t{os.getpid()}-"
SKIP = 77

sys.path.insert(0, TESTBED_DIR)
from hmfabric import layout, probe_cmd  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ctest_unittest  # noqa: E402


def require_netns() -> None:
    """Exit 77 (ctest: skipped) with a clear reason unless we can build namespaces."""
    if os.geteuid() != 0:
        _skip("needs root to build network namespaces")
    probe = PREFIX + "probe"  # not a fabric device name: no `fabric down` claims it
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True,
                          check=False)
    if made.returncode != 0:
        _skip(f"`ip netns add` does not work here: {made.stderr.strip()}")
    subprocess.run(["ip", "netns", "del", probe], check=False)


def _skip(reason: str) -> None:
    print(f"SKIPPED: {reason}", file=sys.stderr)
    sys.exit(SKIP)


def main() -> None:
    require_netns()
    atexit.register(fabric, "down", check=False)  # even if a test class failed to clean up
    ctest_unittest.main()  # a skipped case: exit 77, shown by ctest as skipped


def fabric(*args: str, check: bool = True, prefix: str = PREFIX) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOSTMESH_FABRIC_PREFIX=prefix)
    proc = subprocess.run([sys.executable, FABRIC, *args], env=env, capture_output=True,
                          text=True, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"fabric {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout}{proc.stderr}")
    return proc


class Fabric:
    def __init__(self, hosts: int, rails: int, spines: int, pods: int = 1,
                 flags: tuple[str, ...] = ()):
        self.size = layout.Size(hosts, rails, spines, pods)
        self.flags = flags
        self.layout = layout.build_layout(self.size, PREFIX)

    def up(self) -> "Fabric":
        s = self.size
        fabric("up", "--hosts", str(s.hosts), "--rails", str(s.rails), "--spines",
               str(s.spines), "--pods", str(s.pods), *self.flags)
        return self

    def down(self) -> None:
        fabric("down")

    def ns(self, device: str) -> str:
        return self.layout.ns(device)

    def nic_ip(self, h: int, r: int) -> str:
        return self.layout.nic_link(h, r).a.ip

    def probe(self, h: int, src_rail: int, dst_rail: int, sports: list[int], count: int = 1,
              dport: int = layout.PROBE_DST_PORT, wait: float = 0.3) -> dict[int, dict]:
        src, dst = self.layout.nic_link(h, src_rail).a, self.layout.nic_link(h, dst_rail).a
        result = probe_cmd.send(src, dst, sports, count, dport, wait)
        return {p["sport"]: p for p in result["ports"]}


_WATCH = """table ip hmtest {{
  set seen {{ type inet_service; flags dynamic; counter; }}
  chain count {{
    type filter hook forward priority -10; policy accept;
    udp dport {dport} add @seen {{ udp sport }}
  }}
}}
"""


def watch_udp(ns: str, dport: int = layout.PROBE_DST_PORT) -> None:
    """(Re)starts counting UDP packets to `dport` forwarded by `ns`, per source port."""
    subprocess.run(["ip", "netns", "exec", ns, "nft", "delete table ip hmtest"],
                   capture_output=True, check=False)
    subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=_WATCH.format(dport=dport),
                   text=True, check=True)


def udp_sports_seen(ns: str) -> dict[int, int]:
    out = subprocess.run(["ip", "netns", "exec", ns, "nft", "-j", "list", "set", "ip", "hmtest",
                          "seen"], capture_output=True, text=True, check=True).stdout
    sets = [item["set"] for item in json.loads(out)["nftables"] if "set" in item]
    return {e["elem"]["val"]: e["elem"]["counter"]["packets"] for e in sets[0].get("elem", [])}


def link_counters(ns: str) -> dict[str, dict[str, int]]:
    out = subprocess.run(["ip", "-n", ns, "-s", "-j", "link", "show"], capture_output=True,
                         text=True, check=True).stdout
    counters = {}
    for link in json.loads(out):
        stats = link.get("stats64", {})
        counters[link["ifname"]] = {f"{way}_{key}": stats[way][key] for way in ("rx", "tx")
                                    for key in ("packets", "bytes", "dropped", "errors")}
    return counters
