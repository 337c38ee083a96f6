#!/usr/bin/env python3
"""e2e 9: the operator's views of one faulty 8x4x4 fabric, sharing the fabric.

A real Prometheus (/usr/bin/prometheus) runs in the management namespace on
the shipped per-cluster config (deploy/prometheus/prometheus.yml: job names,
`cluster` and `host` target labels, the hostmesh rules) with the testbed's
targets and a 2 s scrape and evaluation interval.

test_1_prometheus_rules_and_dashboards: all 9 targets are up; the analyzer's
SLA series (latency quantiles of the cluster, every rail and every host; drop
ratios by cause) carry values once a window is judged and every agent's
probe counters rise. Then a gray link is injected; once the analyzer blames
it (its incident diagnosed unclassified: a fabric link moves no NIC counter),
Prometheus shows it (hostmesh_analyzer_suspect_link_ratio), every rule
evaluates without error, HostmeshLinkCulprit is pending or firing, and every
query of every panel of every Grafana dashboard (dashboards/, variables
substituted as Grafana would) runs without error and returns data, except the
few that only have data under another fault (named below, with the reason).

test_1b_incident_evidence_and_bundle: within two windows of the incident's
opening, /api/v1/incidents/ID/evidence holds the suspect link's probes from
before the fault was injected (none lost) and after (lost), healthy siblings,
the involved agents' flight-recorder extracts (real agents answering the
analyzer's request) and their counters; `hostmeshctl incident` shows it and
`hostmeshctl bundle` writes a bundle (build/e2e-artifacts) whose CSVs load;
SIGUSR2 makes an agent write its flight recorder to its state directory.

test_2_oncall_page_in_a_browser: Debian's chromium, headless, driven by
playwright-core (npm, installed by this test into the build directory) opens
the analyzer's page from the management namespace: the faulty link is marked
in the fabric picture, the link_loss incident is listed with its diagnosis
(unclassified, and why) and a bar in the timeline, every RNIC's row shows its
counter deltas over the window (the veths' carrier: none moved), no script
error; a screenshot is saved in the build directory
(e2e-artifacts/oncall-faulty.png). The incident's own page, opened from
its row: the suspect's loss over time beside its siblings, the paths with
the suspect marked, the verdicts, the flight recorders, no script error
(e2e-artifacts/incident-drilldown.png). Then the analyzer is stopped: the page
says it is unreachable, keeps the last data greyed, and Prometheus raises
HostmeshAnalyzerDown (pending); a second screenshot.

Prometheus runs on a temporary config and data directory and is stopped at
the end whatever happens (`fabric down` would kill it too)."""

import csv
import io
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest

import e2e
import harness
import yaml
from hmfabric import layout as L
from hmfabric import start_cmd

sys.path.insert(0, os.path.join(harness.SOURCE_DIR, "tests", "dashboards"))
import grafana_queries as gq  # noqa: E402

PROMETHEUS = "/usr/bin/prometheus"
LISTEN = f"{L.ANALYZER_IP}:9090"
SCRAPE_S = 2
PERCENTILES = ["50", "90", "99", "99.9"]
CLUSTER = "testbed"
LINK = "p0r1-s02"
BUILD_DIR = os.environ.get("HOSTMESH_BUILD_DIR") or os.path.join(harness.SOURCE_DIR, "build")
BROWSER_DIR = os.path.join(harness.SOURCE_DIR, "tests", "e2e", "browser")
CHROMIUM = "/usr/bin/chromium"
# Dashboard queries that return nothing on a fabric whose only fault is a gray
# link, and why; every other query must return data.
EMPTY_UNDER_A_LINK_FAULT = {
    "hostmesh_analyzer_anomalous_rnic_loss_ratio": "series only for a lossy or down RNIC",
    'ranking="latency"': "series only for a latency hotspot",
    # The testbed's NICs are veths in namespaces: no RDMA device, no PHY
    # statistics (pause, FCS), no PCI function. Carrier changes and the
    # diagnosis gauge have data; these have it on real NICs (rxe, mlx5).
    "hostmesh_agent_infiniband_": "veths have no RDMA device",
    "hostmesh_agent_ethtool_": "veths have no PHY statistics (pause frames, FCS)",
    "hostmesh_agent_pcie_": "veths have no PCI function",
    # A (nic, reason) series appears with the first rejected packet: a clean
    # fabric has none.
    "hostmesh_agent_rejected_packets_total": "series only once a NIC rejected a packet",
}


def fabric_curl(*args: str) -> dict | None:
    proc = e2e.fabric("exec", "mgmt", "--", "curl", "-sf", "-m", "10", *args, check=False)
    try:
        return json.loads(proc.stdout) if proc.returncode == 0 else None
    except ValueError:
        return None


def prom(path: str, **params: str) -> dict | None:
    """GET /api/v1/<path>: the `data` of a successful answer, else None."""
    args = ["-G"]
    for k, v in params.items():
        args += ["--data-urlencode", f"{k}={v}"]
    out = fabric_curl(*args, f"http://{LISTEN}/api/v1/{path}")
    return out["data"] if out and out.get("status") == "success" else None


def prom_error(path: str, **params: str) -> str:
    """The error Prometheus gives for a query (curl without -f), for messages."""
    args = ["-G"]
    for k, v in params.items():
        args += ["--data-urlencode", f"{k}={v}"]
    proc = e2e.fabric("exec", "mgmt", "--", "curl", "-s", "-m", "10", *args,
                      f"http://{LISTEN}/api/v1/{path}", check=False)
    return proc.stdout[-400:]


def query(expr: str) -> list[dict] | None:
    """An instant query's vector, or None while Prometheus does not answer."""
    data = prom("query", query=expr)
    return data["result"] if data else None


def prometheus_config(tmp: str) -> str:
    """deploy/prometheus/prometheus.yml with the testbed's targets and fast intervals."""
    with open(os.path.join(harness.SOURCE_DIR, "deploy", "prometheus", "prometheus.yml")) as f:
        config = yaml.safe_load(f)
    config["global"].update({"scrape_interval": f"{SCRAPE_S}s", "scrape_timeout": "1500ms",
                             "evaluation_interval": f"{SCRAPE_S}s"})
    config["rule_files"] = [os.path.join(harness.SOURCE_DIR, "deploy", "prometheus",
                                         "hostmesh-rules.yml")]
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    jobs["hostmesh-analyzer"]["static_configs"] = [{
        "targets": [f"{L.ANALYZER_IP}:{L.ANALYZER_HTTP_PORT}"], "labels": {"cluster": CLUSTER}}]
    agents = os.path.join(tmp, "agents-testbed.yml")
    with open(agents, "w") as f:
        yaml.safe_dump([{"targets": [f"{L.mgmt_ip(h)}:{L.AGENT_METRICS_PORT}"],
                         "labels": {"cluster": CLUSTER, "host": f"h{h:03d}"}}
                        for h in range(Prometheus.HOSTS)], f)
    jobs["hostmesh-agent"]["file_sd_configs"] = [{"files": [agents]}]
    path = os.path.join(tmp, "prometheus.yml")
    with open(path, "w") as f:
        yaml.safe_dump(config, f)
    return path


class Prometheus(e2e.FabricTestCase):
    # Set once the analyzer blames LINK: its name in the API and the metrics
    # ("p0r1:s02 - s02:p0r1", both ends), and when it was injected.
    blamed: str | None = None
    injected_s: float = 0.0
    diagnosis: dict | None = None  # the API's diagnosis of its incident
    incident_id: int | None = None  # its id

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        tmp = tempfile.mkdtemp(prefix="hostmesh-e2e-prometheus-")
        cls.addClassCleanup(shutil.rmtree, tmp, ignore_errors=True)
        config = prometheus_config(tmp)
        cls.prom_log = os.path.join(tmp, "prometheus.log")
        env = dict(os.environ, HOSTMESH_FABRIC_PREFIX=harness.PREFIX)
        with open(cls.prom_log, "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, harness.FABRIC, "exec", "mgmt", "--", PROMETHEUS,
                 f"--config.file={config}", f"--storage.tsdb.path={tmp}/data",
                 f"--web.listen-address={LISTEN}"],
                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True)
        cls.addClassCleanup(stop, proc)  # `fabric exec` execs: proc is prometheus itself

    def until(self, what: str, check, timeout: float):
        """Polls check() until it returns something true; fails with `what` after timeout."""
        deadline = time.time() + timeout
        while True:
            got = check()
            if got:
                return got
            if time.time() > deadline:
                targets = prom("targets") or {}
                health = [(t["scrapeUrl"], t["health"], t["lastError"])
                          for t in targets.get("activeTargets", [])]
                self.fail(f"{what} after {timeout:.0f} s; targets: {health}; prometheus log: "
                          f"{tail(self.prom_log)}")
            time.sleep(1.0)

    def series(self, expr: str, n: int):
        got = query(expr) or []
        return got if len(got) == n else None

    def test_1_prometheus_rules_and_dashboards(self):
        targets = self.HOSTS + 1

        def all_up():
            up = query("up") or []
            return up if len(up) == targets and all(s["value"][1] == "1" for s in up) else None
        up = self.until(f"not all {targets} targets up", all_up, 90)
        e2e.log(f"prometheus: {len(up)} targets up")
        self.assertEqual({s["metric"]["job"] for s in up}, {"hostmesh-analyzer", "hostmesh-agent"})
        self.assertEqual({s["metric"]["cluster"] for s in up}, {CLUSTER})

        self.check_sla_series()
        self.check_agent_counters()

        self.wait_healthy_window()
        t = self.inject("gray", "--link", LINK)
        bound = self.windows_after(t, 3)
        for snap in self.windows_until(bound, self.deadline_for(bound)):
            kinds = {i["kind"] for i in snap.incidents["open"]}
            culprit = [l["name"] for l in snap.culprits() if e2e.link_name(l) == LINK]
            if snap.end_s > t and culprit and "link_loss" in kinds:
                break
        else:
            self.fail(f"{LINK} not blamed with a link_loss incident within 3 windows")
        Prometheus.blamed = culprit[0]
        Prometheus.injected_s = t
        # A gray fabric link moves no NIC counter: diagnosed, but named none
        # of the eight types (it stays plain link loss).
        incident = next(i for i in snap.incidents["open"] if i["kind"] == "link_loss")
        self.assertEqual(incident["diagnosis"]["type"], "unclassified", incident["diagnosis"])
        self.assertTrue(incident["diagnosis"]["rule"], incident["diagnosis"])
        Prometheus.diagnosis = incident["diagnosis"]

        blamed = self.until(f"{LINK} not blamed in Prometheus", lambda: query(
            f'hostmesh_analyzer_suspect_link_ratio{{link="{culprit[0]}",ranking="loss"}}'), 30)
        e2e.log(f"prometheus: {LINK} blamed, loss {float(blamed[0]['value'][1]):.2f}")
        alert = self.until("HostmeshLinkCulprit neither pending nor firing", lambda: query(
            'ALERTS{alertname="HostmeshLinkCulprit",kind="link_loss"}'), 30)
        self.assertEqual(alert[0]["metric"]["cluster"], CLUSTER)
        self.check_rules_evaluate()
        self.check_dashboards()
        self.log_sizing()

    def test_1b_incident_evidence_and_bundle(self):
        """Within two windows of the incident's opening its evidence holds the
        suspect's probes from before the fault (the moment it began), the
        involved agents' flight-recorder extracts and their counters; then
        `hostmeshctl incident` shows it and `hostmeshctl bundle` writes a
        bundle whose CSVs load."""
        if Prometheus.blamed is None:
            self.skipTest("test_1 did not get the fault blamed; no incident to read")
        incidents = e2e.api("incidents") or {"open": []}
        incident = next(i for i in incidents["open"] if i["kind"] == "link_loss")
        Prometheus.incident_id = incident["id"]
        opened_s = incident["first_seen_ns"] / 1e9
        bound = self.windows_after(opened_s, 2)
        deadline = self.deadline_for(bound)
        evidence = None
        while time.time() < deadline:
            evidence = e2e.api(f"incidents/{incident['id']}/evidence")
            if (evidence and evidence["flight_records"] and evidence["counters"]
                    and self.suspect_probes(evidence)[1]):
                break
            time.sleep(1.0)
        self.assertIsNotNone(evidence, "no evidence served")
        before, after = self.suspect_probes(evidence)
        records = {r["agent_id"]: r for r in evidence["flight_records"]}
        e2e.log(f"evidence of incident {incident['id']}: {len(evidence['probes']['rows'])} probes "
                f"({len(before)} of the suspect before the fault, {len(after)} after, "
                f"{sum(1 for p in after if p[2])} timeouts), {len(evidence['tuples'])} 5-tuples, "
                f"flight records of {sorted(records)}, {len(evidence['counters'])} counter reads; "
                f"{evidence['capture']['bytes']} bytes of probes in {evidence['capture']['parts']} "
                f"parts, thinned 1 in {evidence['capture']['thinned_every']}")
        self.assertEqual(evidence["groups"][0]["role"], "suspect")
        self.assertEqual(evidence["groups"][0]["name"], Prometheus.blamed)
        self.assertTrue(evidence["groups"][1:], "no healthy sibling kept beside the suspect")
        self.assertTrue(before, "no probe of the suspect from before the fault")
        self.assertFalse(any(p[2] for p in before), "timeouts before the fault was injected")
        self.assertTrue(any(p[2] for p in after), "no timeout of the suspect after the fault")
        self.assertTrue(records, "no flight-recorder extract")
        self.assertTrue(set(records) <= set(evidence["capture"]["flight_record_agents"]))
        self.assertTrue(any(e["kind"] == "probe" for r in records.values() for e in r["events"]),
                        "a flight record without the agent's probes")
        self.assertTrue(evidence["counters"], "no counters of the involved hosts")
        self.assertTrue(evidence["verdicts"], "no window verdict")

        ctl = os.path.join(BUILD_DIR, "ctl", "hostmeshctl")
        at = f"http://{L.ANALYZER_IP}:{L.ANALYZER_HTTP_PORT}"
        shown = e2e.fabric("exec", "mgmt", "--", ctl, "incident", str(incident["id"]),
                           "--analyzer", at, check=False)
        self.assertEqual(shown.returncode, 1, shown.stderr)  # open
        self.assertIn("suspect", shown.stdout)
        self.assertIn(Prometheus.blamed, shown.stdout)
        out_dir = os.path.join(BUILD_DIR, "e2e-artifacts")
        os.makedirs(out_dir, exist_ok=True)
        bundle = os.path.join(out_dir, f"incident-{incident['id']}.tar.gz")
        made = e2e.fabric("exec", "mgmt", "--", ctl, "bundle", str(incident["id"]), "-o", bundle,
                          "--analyzer", at, check=False)
        self.assertEqual(made.returncode, 0, made.stderr)
        with tarfile.open(bundle) as tar:
            folder = f"hostmesh-incident-{incident['id']}/"
            files = {m.name[len(folder):]: tar.extractfile(m).read().decode()
                     for m in tar.getmembers() if m.isfile()}
        e2e.log(f"bundle {bundle}: {sorted(files)}")
        for name in ("README.txt", "evidence.json", "probes.csv", "paths.csv", "counters.csv",
                     "verdicts.csv", "flight-records.jsonl", "analyzer.json"):
            self.assertIn(name, files)
        probes = list(csv.DictReader(io.StringIO(files["probes.csv"])))
        # The capture may still be reading the suspect's 5-tuples (a slice per loop turn), so
        # the bundle is checked against its own evidence.json, not the one read above.
        self.assertEqual(len(probes), len(json.loads(files["evidence.json"])["probes"]["rows"]))
        self.assertTrue(any(p["role"] == "suspect" and p["timeout"] == "1" for p in probes))
        self.assertTrue(list(csv.DictReader(io.StringIO(files["paths.csv"]))))
        self.assertTrue(list(csv.DictReader(io.StringIO(files["counters.csv"]))))
        self.assertTrue(all(json.loads(line) for line in files["flight-records.jsonl"].splitlines()))
        self.assertNotIn(".key", files["analyzer.json"], "a TLS key path in the bundle")
        self.check_local_capture()

    def check_local_capture(self):
        """SIGUSR2 makes an agent write its flight recorder to its state directory."""
        folder = start_cmd.recorder_dir(harness.PREFIX, "h000")
        before = set(os.listdir(folder)) if os.path.isdir(folder) else set()
        pid = start_cmd.running_pids(harness.PREFIX, "h000")
        self.assertEqual(len(pid), 1, "the agent's pid")
        os.kill(pid[0], signal.SIGUSR2)
        deadline = time.time() + 20
        written: list[str] = []
        while time.time() < deadline and not written:
            time.sleep(0.5)
            if os.path.isdir(folder):
                written = sorted(f for f in set(os.listdir(folder)) - before
                                 if f.startswith("flight-") and f.endswith(".jsonl"))
        self.assertTrue(written, f"no local capture in {folder} after SIGUSR2")
        with open(os.path.join(folder, written[-1])) as f:
            events = [json.loads(line) for line in f]
        kinds = {e["kind"] for e in events}
        e2e.log(f"local capture of h000: {written[-1]}, {len(events)} events, kinds {sorted(kinds)}")
        self.assertIn("probe", kinds)
        self.assertIn("trace", kinds)
        self.assertTrue(all(a["time_ns"] <= b["time_ns"] for a, b in zip(events, events[1:])),
                        "not oldest first")

    @staticmethod
    def suspect_probes(evidence: dict) -> tuple[list, list]:
        """The suspect group's probe rows sent before and after the fault."""
        tuples = evidence["tuples"]
        rows = [r for r in evidence["probes"]["rows"] if tuples[r[0]]["group"] == 0]
        cut = Prometheus.injected_s * 1e9
        return [r for r in rows if r[1] < cut], [r for r in rows if r[1] >= cut]

    def check_sla_series(self):
        # A judged window: the first one ends within window + grace of the start.
        cluster = self.until(
            "no cluster latency quantiles from the analyzer",
            lambda: self.series("hostmesh_analyzer_cluster_latency_seconds",
                                2 * len(PERCENTILES)),
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

        drops = self.series("hostmesh_analyzer_cluster_drop_ratio", 2)
        self.assertIsNotNone(drops, "cluster drop ratios by cause")
        self.assertEqual({s["metric"]["cause"] for s in drops}, {"rnic", "network"})
        self.assertTrue(all(0 <= float(s["value"][1]) <= 1 for s in drops), drops)

        rails = self.series(
            'hostmesh_analyzer_rail_latency_seconds{kind="network",percentile="99"}', self.RAILS)
        self.assertIsNotNone(rails, "a network P99 per rail")
        self.assertEqual(sorted(s["metric"]["rail"] for s in rails),
                         [str(r) for r in range(self.RAILS)])
        hosts = self.series(
            'hostmesh_analyzer_host_latency_seconds{kind="processing",percentile="90"}',
            self.HOSTS)
        self.assertIsNotNone(hosts, "a processing P90 per host")
        self.assertEqual(sorted(s["metric"]["host"] for s in hosts),
                         [f"h{h:03d}" for h in range(self.HOSTS)])
        self.assertTrue(all(float(s["value"][1]) > 0 for s in rails + hosts))

    def check_agent_counters(self):
        # Every agent: 12 NIC pairs of sent and received counters, rising.
        pairs = self.RAILS * (self.RAILS - 1)
        for name in ("hostmesh_agent_probes_sent_total", "hostmesh_agent_probes_received_total"):
            self.assertIsNotNone(self.series(name, self.HOSTS * pairs),
                                 f"{name}: a series per pair")
            rates = self.until(
                f"{name} not rising on every agent",
                lambda name=name: self.series(
                    f"sum by (host) (rate({name}[{5 * SCRAPE_S}s])) > 0", self.HOSTS), 30)
            e2e.log(f"{name} per agent (/s): "
                    + ", ".join(f"{s['metric']['host']}={float(s['value'][1]):.1f}"
                                for s in sorted(rates, key=lambda s: s["metric"]["host"])))

    def check_rules_evaluate(self):
        groups = (prom("rules") or {}).get("groups", [])
        self.assertEqual({g["name"] for g in groups}, {"hostmesh.recording", "hostmesh.alerts"})
        # Two evaluations after the fault: every rule has run on real series.
        time.sleep(2 * SCRAPE_S)
        groups = prom("rules")["groups"]
        bad = [(r["name"], r.get("lastError")) for g in groups for r in g["rules"]
               if r.get("health") != "ok"]
        self.assertEqual(bad, [], "rules that fail to evaluate")
        empty = [r["name"] for g in groups for r in g["rules"]
                 if r["type"] == "recording" and not query(r["name"])]
        # No agent is down here, so that count has no series; everything else does.
        self.assertEqual(empty, ["hostmesh:agents_down:count"], "recording rules without data")

    def check_dashboards(self):
        values = {"cluster": CLUSTER, "rail": ".*", "host": "h000|h001",
                  "__rate_interval": f"{4 * SCRAPE_S * 2}s", "__interval": f"{SCRAPE_S}s"}
        for v in gq.variable_queries(values):
            data = prom("series", **{"match[]": v.selector})
            got = sorted({s.get(v.label) for s in data or [] if s.get(v.label)})
            self.assertTrue(got, f"{v.dashboard}: variable {v.name}: no values for {v.selector}")
            e2e.log(f"dashboard variable {v.name}: {got}")
        end = time.time()
        failures, empty_ok, ran = [], [], 0
        for q in gq.queries(values):
            ran += 1
            if q.instant:
                data = prom("query", query=q.expr)
            else:
                data = prom("query_range", query=q.expr, start=f"{end - 120:.0f}",
                            end=f"{end:.0f}", step=f"{SCRAPE_S}")
            where = f"{q.dashboard}: {q.panel} ({q.ref})"
            if data is None:
                failures.append(f"{where}: error {prom_error('query', query=q.expr)}")
            elif not data["result"]:
                reason = next((r for k, r in EMPTY_UNDER_A_LINK_FAULT.items() if k in q.expr),
                              None)
                if reason is None:
                    failures.append(f"{where}: no data for {q.expr}")
                else:
                    empty_ok.append(f"{where}: {reason}")
        e2e.log(f"dashboards: {ran} queries ran; empty as expected: {empty_ok}")
        self.assertEqual(failures, [], "dashboard queries that failed or returned no data")
        self.assertTrue(empty_ok, "the allowance for empty panels is unused: remove it")

    def log_sizing(self):
        """Figures for the sizing in docs/operating.md: series per agent and of the analyzer,
        bytes the analyzer ingests per host."""
        per_agent = query('count by (host) ({job="hostmesh-agent"})') or []
        analyzer = query('count({job="hostmesh-analyzer"})') or []
        ingest = query(f"rate(hostmesh_ingest_bytes_total[{10 * SCRAPE_S}s])") or []
        counts = sorted(int(s["value"][1]) for s in per_agent)
        e2e.log(f"sizing: series per agent ({self.RAILS} NICs) {counts[:1]}..{counts[-1:]}, "
                f"analyzer {analyzer[0]['value'][1] if analyzer else '?'} series; ingest "
                + (f"{float(ingest[0]['value'][1]) / self.HOSTS:.0f} B/s per host"
                   if ingest else "?"))

    def test_2_oncall_page_in_a_browser(self):
        name = Prometheus.blamed
        if name is None:
            self.skipTest("test_1 did not get the fault blamed; nothing to show")
        reason = browser_missing()
        if reason:
            self.skipTest(reason)
        driver = install_driver()
        out_dir = os.path.join(BUILD_DIR, "e2e-artifacts")
        os.makedirs(out_dir, exist_ok=True)
        env = dict(os.environ, HOSTMESH_FABRIC_PREFIX=harness.PREFIX, HOSTMESH_CHROMIUM=CHROMIUM)
        page = subprocess.Popen(
            [sys.executable, harness.FABRIC, "exec", "mgmt", "--", "node", driver,
             f"http://{L.ANALYZER_IP}:{L.ANALYZER_HTTP_PORT}/", out_dir],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True)
        for pipe in (page.stdin, page.stdout, page.stderr):
            self.addCleanup(pipe.close)  # after stop(): cleanups run last-in first-out
        self.addCleanup(stop, page)

        live = self.read_phase(page, "live", 90)
        e2e.log(f"page, live: culprit cells {live['culprit']}, incidents {live['incidents']}, "
                f"cards {live['cards']}; screenshot {out_dir}/oncall-faulty.png")
        self.assertEqual(live["badge"], "live")
        self.assertEqual(live["errors"], [], "script errors on the page")
        self.assertIn("rail switches \u00d7 spines (16 links)", live["pictures"])
        self.assertGreaterEqual(live["cells"], 16 + self.HOSTS * self.RAILS)
        self.assertEqual(live["culprit"], [name], "the faulty link is not marked in the picture")
        self.assertEqual(live["rnic_down"], [], "an RNIC drawn down for a link fault")
        kind_at = live["incident_heads"].index("kind")
        link_rows = [r for r in live["incidents"]
                     if r[kind_at] == "link_loss" and name in r[kind_at + 1]]
        self.assertTrue(link_rows, f"no link_loss incident for {name}: {live['incidents']}")
        # Its diagnosis as the API gave it: type and the sentence saying why
        # (the loss figure moves from window to window).
        diagnosis = link_rows[0][live["incident_heads"].index("diagnosis")]
        self.assertTrue(diagnosis.startswith("unclassified: "), diagnosis)
        subject = Prometheus.diagnosis["evidence"].split(" losing ")[0]
        self.assertIn(subject + " losing ", diagnosis)
        self.assertIn("% of probes", diagnosis)
        # Every RNIC with its counter deltas over the judged window beside its
        # verdict: the veths' carrier counters are read, and a fabric link's
        # fault moves none of them.
        self.assertIn("counters (window)", live["all_rnic_heads"])
        counters = [r[live["all_rnic_heads"].index("counters (window)")]
                    for r in live["all_rnics"]]
        self.assertEqual(len(counters), self.HOSTS * self.RAILS, live["all_rnics"])
        self.assertIn("none moved", counters, "no RNIC's telemetry on the page")
        self.assertEqual(set(counters) - {"none moved", "-"}, set(), counters)
        self.assertTrue(any(b.startswith("link_loss " + name) for b in live["timeline_open"]),
                        f"no open bar for the incident: {live['timeline_open']}")
        self.assertGreater(live["timeline_windows"], 0, "no judged window in the timeline")
        self.assertEqual([r[1] for r in live["links"]], [name], "the suspicious-link table")
        self.assertNotEqual(live["cards"].get("network drop rate"), "0%", live["cards"])
        # No agent here is under pressure (the testbed's watch only their own cgroups).
        self.assertEqual(live["cards"].get("hosts shedding load"), "none", live["cards"])

        # The incident's own page, opened from its row's link.
        drill = self.read_phase(page, "incident", 60)
        e2e.log(f"incident page: {drill['title']!r}, lines {drill['lines']}, groups "
                f"{drill['groups'][:2]}, {len(drill['paths'])} paths, {len(drill['verdicts'])} "
                f"verdicts, {drill['n']}; screenshot {out_dir}/incident-drilldown.png")
        self.assertEqual(drill["errors"], [], "script errors on the incident page")
        self.assertEqual(drill["badge"], "live")
        self.assertTrue(drill["url"].endswith(f"/incidents/{Prometheus.incident_id}"), drill["url"])
        self.assertIn("link_loss", drill["title"])
        self.assertEqual(drill["lines"].get("suspect"), 1, "the suspect's loss over time")
        self.assertGreaterEqual(drill["lines"].get("sibling", 0), 1, "its siblings' beside it")
        self.assertEqual(drill["marks"], ["opened", "first-timeout"])
        self.assertEqual(drill["groups"][0][0], "suspect")
        self.assertIn(name, drill["groups"][0][1])
        self.assertTrue(any(name in r[1] for r in drill["paths"]), drill["paths"][:3])
        self.assertTrue(drill["suspect_hops"] >= 1, "the suspect not marked in the path picture")
        self.assertTrue(drill["verdicts"], "no window verdict on the page")
        self.assertTrue(drill["diagnosis"].startswith("diagnosis: unclassified"), drill["diagnosis"])
        self.assertIn("agents;", drill["n"].get("n-flight", ""))
        self.assertFalse(drill["n"]["n-flight"].startswith("(0 agents"), drill["n"])
        self.assertIn(" probe", drill["n"]["n-flight"], "the agents' probes not in their records")

        # The analyzer goes away: the page must say so and keep the last data.
        pid = start_cmd.running_pids(harness.PREFIX, "analyzer")
        self.assertEqual(len(pid), 1, "the analyzer's pid")
        os.kill(pid[0], signal.SIGTERM)
        page.stdin.write("analyzer stopped\n")
        page.stdin.flush()
        gone = self.read_phase(page, "unreachable", 60)
        e2e.log(f"page, analyzer stopped: badge {gone['badge']!r}, banner {gone['banner']!r}; "
                f"screenshot {out_dir}/oncall-unreachable.png")
        self.assertEqual(gone["badge"], "analyzer unreachable")
        self.assertTrue(gone["stale"], "the stale data is not greyed")
        self.assertIn("analyzer unreachable", gone["banner"] or "")
        self.assertIn("showing data from", gone["banner"] or "")
        self.assertEqual(gone["incidents"], live["incidents"], "the last data is not kept")
        self.assertEqual(gone["culprit"], [name])
        self.assertEqual(gone["errors"], [], "script errors while the analyzer is away")
        self.assertEqual(page.wait(timeout=30), 0, page.stderr.read()[-2000:])
        self.until("HostmeshAnalyzerDown not pending", lambda: query(
            'ALERTS{alertname="HostmeshAnalyzerDown",cluster="testbed"}'), 30)

    def read_phase(self, proc: subprocess.Popen, phase: str, timeout: float) -> dict:
        """The driver's JSON line for `phase`; fails with its stderr if it ends or stalls."""
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        line = proc.stdout.readline() if ready else ""
        if not line:
            proc.kill()
            self.fail(f"the browser driver gave no {phase!r} report in {timeout:.0f} s: "
                      f"{proc.stderr.read()[-3000:]}")
        got = json.loads(line)
        self.assertEqual(got["phase"], phase)
        return got


def browser_missing() -> str | None:
    for tool, package in (("node", "nodejs"), ("npm", "npm"), (CHROMIUM, "chromium")):
        if shutil.which(tool) is None:
            return f"{tool} not found (Debian package {package}): the page is not tested"
    return None


def install_driver() -> str:
    """playwright-core from the npm registry into BUILD/e2e-browser (not in the
    source tree), as package-lock.json pins it; reused while the lock matches."""
    target = os.path.join(BUILD_DIR, "e2e-browser")
    os.makedirs(target, exist_ok=True)
    for name in ("package.json", "package-lock.json", "oncall_page.mjs"):
        shutil.copyfile(os.path.join(BROWSER_DIR, name), os.path.join(target, name))
    installed = os.path.join(target, "node_modules", ".package-lock.json")
    with open(os.path.join(target, "package-lock.json")) as f:
        wanted = json.load(f)["packages"]["node_modules/playwright-core"]["version"]
    try:
        with open(installed) as f:
            have = json.load(f)["packages"]["node_modules/playwright-core"]["version"]
    except (OSError, ValueError, KeyError):
        have = None
    if have != wanted:
        out = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                             cwd=target, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise AssertionError(f"npm ci in {target} failed: {out.stdout}{out.stderr}")
    return os.path.join(target, "oncall_page.mjs")


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the process's own session, SIGKILL if it lingers."""
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
