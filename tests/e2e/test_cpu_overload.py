#!/usr/bin/env python3
"""e2e 7: CPU overload on one host of an 8x4x4 fabric with real agents and the
real analyzer (`fabric fault add cpu`: that host's agent and stress-ng in a
cgroup allowed a tenth of a CPU, which stress-ng keeps used up, so the agent
waits for the CPU and nothing else on the machine does; `wire-delay` first,
so replies reach the agent while it sleeps, as on hardware): within 3 windows
after the injection a host_processing_delay incident names that host, and
none names another; and a starved host is not a broken network: no network
incident opens (link_loss, latency_hotspot, switch, RNIC), no link is a
culprit and no RNIC is anomalous. The incident is diagnosed cpu_overload.

Self-protection (docs/agent.md#self-protection) on the same starved host:
its agent sees its cgroup at its CPU limit (the testbed's agents watch only
their cgroup, which `fabric start` lets them see) and steps its probe rate down to
the lowest step (0.1) within 30 s of the injection, with its defaults; the
analyzer names it, and only it, as shedding load (/api/v1/status); the
incident above still opens at the reduced rate (shedding sheds load, it does
not hide the symptom). Once the load is gone the agent is back at its
configured rate within 2 minutes."""

import json
import os
import time
import unittest

import e2e
import harness
from hmfabric import cpu_cgroup, layout

HOST = "h006"
LOWEST_STEP = 0.1  # protect.steps' last, the agent's default


def rate_fraction(host: str) -> float | None:
    """The agent's hostmesh_agent_probe_rate_fraction, None when /metrics does not answer."""
    mgmt_ip = layout.mgmt_ip(int(host[1:]))
    proc = e2e.fabric("exec", "mgmt", "--", "curl", "-sf", "-m", "5",
                      f"http://{mgmt_ip}:{layout.AGENT_METRICS_PORT}/metrics", check=False)
    for line in proc.stdout.splitlines():
        if line.startswith("hostmesh_agent_probe_rate_fraction "):
            return float(line.split()[1])
    return None


def throttling() -> str:
    """How often the cpu fault's cgroup was throttled: proof the host was starved."""
    [fault] = [f for f in json.loads(e2e.fabric("fault", "list").stdout) if f["kind"] == "cpu"]
    _, mount = cpu_cgroup.hierarchy()
    path = os.path.join(mount, cpu_cgroup.name_for(harness.PREFIX, fault["id"]))
    with open(os.path.join(path, "cpu.stat")) as f:
        stat = dict(line.split() for line in f)
    throttled_s = (int(stat["throttled_usec"]) / 1e6 if "throttled_usec" in stat
                   else int(stat.get("throttled_time", 0)) / 1e9)
    return (f"cgroup {path}: throttled in {stat['nr_throttled']} of {stat['nr_periods']} "
            f"periods, {throttled_s:.1f} s in all")


class CpuOverload(e2e.FabricTestCase):
    def test_processing_delay_incident_for_the_host_no_network_incident(self):
        # Replies must arrive while the agent sleeps, as on hardware; on bare
        # veths they arrive inside its own send call and starvation never shows.
        self.inject("wire-delay", "--ms", "0.2")
        self.wait_healthy_window()
        t = self.inject("cpu", "--host", HOST, "--cpus", "0.1")
        bound = self.windows_after(t, 3)
        flagged = []
        network = []
        shedding = {}  # host -> its hosts_shedding entry, the latest seen
        for snap in self.windows_until(bound, self.deadline_for(bound)):
            if snap.end_s <= t:
                continue  # judged before the fault
            for entry in (e2e.api("status") or {}).get("hosts_shedding", []):
                shedding[entry["host"]] = entry
            sla = {h["host"]: h for h in (e2e.api("sla") or {}).get("hosts", [])}
            if HOST in sla:
                e2e.log(f"{HOST} processing p50/p90/p99 " + "/".join(
                    f"{sla[HOST]['processing_ns'][q] / 1e3:.0f}" for q in ("p50", "p90", "p99"))
                    + f" us over {sla[HOST]['probes']} probes")
            hosts = [i["suspect"].get("host") for i in snap.incidents["open"]
                     if i["kind"] == "host_processing_delay"]
            if HOST in hosts:
                flagged.append(snap.end_s)
            network += [f"{i['kind']} {i['summary']}" for i in snap.incidents["open"]
                        if i["kind"] != "host_processing_delay"]
            network += [f"{e2e.link_name(l)} culprit" for l in snap.culprits()]
            network += [f"{r['host']}.nic{r['nic']} anomalous" for r in snap.anomalous_rnics()]
            last = snap
        starved = throttling()
        e2e.log(starved)
        self.assertTrue(flagged, f"no host_processing_delay incident for {HOST} within 3 "
                                 f"windows ({starved}); last: {last.describe()}")
        others = [i["suspect"].get("host") for i in last.incidents["open"]
                  if i["kind"] == "host_processing_delay" and i["suspect"].get("host") != HOST]
        self.assertEqual(others, [], "processing delay blamed on hosts not overloaded")
        self.assertEqual(sorted(set(network)), [], "network faults reported for a CPU overload")
        mine = [i for i in last.incidents["open"]
                if i["kind"] == "host_processing_delay" and i["suspect"].get("host") == HOST]
        self.assertTrue(mine, last.describe())
        e2e.log(f"diagnosis: {mine[0]['diagnosis']}")
        self.assertEqual(mine[0]["diagnosis"]["type"], "cpu_overload", mine[0]["diagnosis"])

        # Self-protection: the starved host, and only it, shed load to the lowest step in 30 s.
        e2e.log(f"hosts shedding: {shedding}")
        self.assertEqual(sorted(shedding), [HOST], "shedding hosts other than the starved one")
        entry = shedding[HOST]
        self.assertEqual(entry["rate_fraction"], LOWEST_STEP, entry)
        self.assertIn("cgroup cpu throttled", entry["cause"])
        reached_s = entry["since_ns"] / 1e9 - t
        e2e.log(f"{HOST} at the lowest step {reached_s:.1f} s after the injection")
        self.assertLessEqual(reached_s, 30.0, entry)

        # The load gone, back at the configured rate within 2 minutes.
        [fault] = [f for f in json.loads(e2e.fabric("fault", "list").stdout) if f["kind"] == "cpu"]
        e2e.fabric("fault", "clear", fault["id"])
        cleared = time.time()
        fraction = rate_fraction(HOST)
        while fraction != 1.0 and time.time() - cleared < 150:
            time.sleep(2)
            fraction = rate_fraction(HOST)
        recovered_s = time.time() - cleared
        e2e.log(f"{HOST} back at rate fraction {fraction} {recovered_s:.0f} s after the load ended")
        self.assertEqual(fraction, 1.0, f"still shedding {recovered_s:.0f} s after the load ended")
        self.assertLessEqual(recovered_s, 120.0)


if __name__ == "__main__":
    e2e.main()
