#!/usr/bin/env python3
"""e2e 9: a real Prometheus (/usr/bin/prometheus, scripts/install-deps.sh)
scrapes the analyzer and every agent of an 8x4x4 fabric every 2 s, from the
management namespace as a monitoring host would: all 9 targets are up (each
exposition parses), and through Prometheus's query API the analyzer's SLA
series (latency quantiles of the cluster, every rail and every host; drop
ratios by cause) carry values once a window is judged, and every agent's
probe counters are there and rising. Prometheus runs on a temporary config
and data directory and is stopped at the end whatever happens (`fabric down`
would kill it too: it lives in the fabric's namespace)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import e2e
import harness
from hmfabric import layout as L

PROMETHEUS = "/usr/bin/prometheus"
LISTEN = f"{L.ANALYZER_IP}:9090"
SCRAPE_S = 2
PERCENTILES = ["50", "90", "99", "99.9"]


class Prometheus(e2e.FabricTestCase):
    def start_prometheus(self) -> None:
        tmp = tempfile.mkdtemp(prefix="hostmesh-e2e-prometheus-")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        agents = [f"{L.mgmt_ip(h)}:{L.AGENT_METRICS_PORT}" for h in range(self.HOSTS)]
        config = {"global": {"scrape_interval": f"{SCRAPE_S}s", "scrape_timeout": "1500ms"},
                  "scrape_configs": [
                      {"job_name": "analyzer", "static_configs": [
                          {"targets": [f"{L.ANALYZER_IP}:{L.ANALYZER_HTTP_PORT}"]}]},
                      {"job_name": "agents", "static_configs": [{"targets": agents}]}]}
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            json.dump(config, f)  # JSON is YAML
        self.prom_log = os.path.join(tmp, "prometheus.log")
        env = dict(os.environ, HOSTMESH_FABRIC_PREFIX=harness.PREFIX)
        with open(self.prom_log, "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, harness.FABRIC, "exec", "mgmt", "--", PROMETHEUS,
                 f"--config.file={tmp}/prometheus.yml", f"--storage.tsdb.path={tmp}/data",
                 f"--web.listen-address={LISTEN}"],
                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True)
        self.addCleanup(stop, proc)  # `fabric exec` execs: proc is prometheus itself

    def query(self, expr: str) -> list[dict] | None:
        """An instant query's vector, or None while Prometheus does not answer."""
        out = fabric_curl("-G", "--data-urlencode", f"query={expr}",
                          f"http://{LISTEN}/api/v1/query")
        return out["data"]["result"] if out and out.get("status") == "success" else None

    def until(self, what: str, check, timeout: float):
        """Polls check() until it returns something true; fails with `what` after timeout."""
        deadline = time.time() + timeout
        while True:
            got = check()
            if got:
                return got
            if time.time() > deadline:
                targets = fabric_curl(f"http://{LISTEN}/api/v1/targets") or {}
                health = [(t["scrapeUrl"], t["health"], t["lastError"])
                          for t in (targets.get("data") or {}).get("activeTargets", [])]
                self.fail(f"{what} after {timeout:.0f} s; targets: {health}; prometheus log: "
                          f"{tail(self.prom_log)}")
            time.sleep(1.0)

    def test_prometheus_scrapes_analyzer_and_agents(self):
        self.start_prometheus()
        targets = self.HOSTS + 1

        def all_up():
            up = self.query("up") or []
            return up if len(up) == targets and all(s["value"][1] == "1" for s in up) else None
        up = self.until(f"not all {targets} targets up", all_up, 90)
        e2e.log(f"prometheus: {len(up)} targets up")

        def series(expr: str, n: int):
            got = self.query(expr) or []
            return got if len(got) == n else None

        # A judged window: the first one ends within window + grace of the start.
        cluster = self.until(
            "no cluster latency quantiles from the analyzer",
            lambda: series("hostmesh_analyzer_cluster_latency_seconds", 2 * len(PERCENTILES)),
            3 * e2e.WINDOW_S + e2e.GRACE_S + 30)
        got = {(s["metric"]["kind"], s["metric"]["percentile"]): float(s["value"][1])
               for s in cluster}
        e2e.log(f"cluster latency (s): {got}")
        self.assertEqual(set(got), {(k, p) for k in ("network", "processing")
                                    for p in PERCENTILES})
        self.assertTrue(all(0 < v < 1 for v in got.values()), got)
        for kind in ("network", "processing"):
            values = [got[(kind, p)] for p in PERCENTILES]
            self.assertEqual(values, sorted(values), f"{kind} quantiles not ordered")

        drops = series("hostmesh_analyzer_cluster_drop_ratio", 2)
        self.assertIsNotNone(drops, "cluster drop ratios by cause")
        self.assertEqual({s["metric"]["cause"] for s in drops}, {"rnic", "network"})
        self.assertTrue(all(0 <= float(s["value"][1]) <= 1 for s in drops), drops)

        rails = series('hostmesh_analyzer_rail_latency_seconds{kind="network",percentile="99"}',
                       self.RAILS)
        self.assertIsNotNone(rails, "a network P99 per rail")
        self.assertEqual(sorted(s["metric"]["rail"] for s in rails),
                         [str(r) for r in range(self.RAILS)])
        hosts = series('hostmesh_analyzer_host_latency_seconds{kind="processing",percentile="90"}',
                       self.HOSTS)
        self.assertIsNotNone(hosts, "a processing P90 per host")
        self.assertEqual(sorted(s["metric"]["host"] for s in hosts),
                         [f"h{h:03d}" for h in range(self.HOSTS)])
        self.assertTrue(all(float(s["value"][1]) > 0 for s in rails + hosts))

        # Every agent: 12 NIC pairs of sent and received counters, rising.
        pairs = self.RAILS * (self.RAILS - 1)
        for name in ("hostmesh_agent_probes_sent_total", "hostmesh_agent_probes_received_total"):
            self.assertIsNotNone(series(name, self.HOSTS * pairs), f"{name}: a series per pair")
            rates = self.until(
                f"{name} not rising on every agent",
                lambda name=name: series(f"sum by (instance) (rate({name}[{5 * SCRAPE_S}s])) > 0",
                                         self.HOSTS), 30)
            e2e.log(f"{name} per agent (/s): "
                    + ", ".join(f"{s['metric']['instance']}={float(s['value'][1]):.1f}"
                                for s in sorted(rates, key=lambda s: s["metric"]["instance"])))


def fabric_curl(*args: str) -> dict | None:
    proc = e2e.fabric("exec", "mgmt", "--", "curl", "-sf", "-m", "5", *args, check=False)
    try:
        return json.loads(proc.stdout) if proc.returncode == 0 else None
    except ValueError:
        return None


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to Prometheus (its own session), SIGKILL if it lingers."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def tail(path: str, lines: int = 5) -> str:
    try:
        with open(path, errors="replace") as f:
            return " | ".join(f.read().strip().splitlines()[-lines:])
    except OSError:
        return "(no log)"


if __name__ == "__main__":
    e2e.main()
