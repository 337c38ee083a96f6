#!/usr/bin/env python3
"""dashboards/: the Grafana dashboards, checked offline. Each is a current
JSON model (schema 39, unique uid, panels on the 24-column grid without
overlap), reads Prometheus through the `datasource` variable, offers the
cluster, rail and host variables it uses, filters every query by cluster,
and names only metrics the code exports (or the rules record). Every query
parses: promtool checks them as recording rules (with the variables
substituted). That they return data is tests/e2e/test_prometheus.py's job."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

import grafana_queries as gq

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ctest_unittest  # noqa: E402

SAMPLE = {"cluster": "c1", "rail": ".*", "host": "h000|h001", "__rate_interval": "1m",
          "__interval": "15s", "datasource": "prom"}


def exported_metric_names() -> set[str]:
    """Names the C++ code registers ("hostmesh_..." string literals) and the
    recording rules' names."""
    names = set()
    for top in ("agent", "analyzer", "common", "tracer"):
        for d, _, files in os.walk(os.path.join(gq.SOURCE_DIR, top)):
            for f in files:
                if f.endswith((".cc", ".h")):
                    with open(os.path.join(d, f)) as src:
                        names.update(re.findall(r'"(hostmesh_[a-z0-9_]+)"', src.read()))
    # hostmesh_analyzer_<scope>_drop_ratio / _latency_seconds are built from a scope.
    for scope in ("cluster", "rail", "host"):
        names.update({f"hostmesh_analyzer_{scope}_drop_ratio",
                      f"hostmesh_analyzer_{scope}_latency_seconds"})
    with open(os.path.join(gq.SOURCE_DIR, "deploy", "prometheus", "hostmesh-rules.yml")) as f:
        for group in yaml.safe_load(f)["groups"]:
            names.update(r["record"] for r in group["rules"] if "record" in r)
    return names


class Dashboards(unittest.TestCase):
    def test_there_are_four_with_unique_uids(self):
        boards = gq.dashboards()
        self.assertEqual(set(boards), {"hostmesh-sla.json", "hostmesh-drilldown.json",
                                       "hostmesh-links.json", "hostmesh-components.json"})
        uids = [d["uid"] for d in boards.values()]
        self.assertEqual(len(uids), len(set(uids)))
        for name, d in boards.items():
            self.assertGreaterEqual(d["schemaVersion"], 39, name)
            self.assertTrue(d["title"].startswith("hostmesh / "), name)
            self.assertNotIn("__inputs", d, f"{name}: provisioned dashboards take no inputs")
            self.assertNotIn("id", d, f"{name}: a fixed id clashes across Grafana instances")

    def test_grid_layout(self):
        for name, d in gq.dashboards().items():
            cells = set()
            ids = set()
            for p in d["panels"]:
                g = p["gridPos"]
                self.assertLessEqual(g["x"] + g["w"], 24, f"{name}: {p['title']}")
                self.assertNotIn(p["id"], ids, f"{name}: panel id {p['id']} repeats")
                ids.add(p["id"])
                for x in range(g["x"], g["x"] + g["w"]):
                    for y in range(g["y"], g["y"] + g["h"]):
                        self.assertNotIn((x, y), cells, f"{name}: {p['title']} overlaps")
                        cells.add((x, y))

    def test_panels_read_prometheus_through_the_variable(self):
        for name, d in gq.dashboards().items():
            for p in gq.panels(d):
                self.assertEqual(p["datasource"], {"type": "prometheus", "uid": "${datasource}"},
                                 f"{name}: {p['title']}")
                self.assertTrue(p.get("targets"), f"{name}: {p['title']} has no query")
                self.assertTrue(p.get("description"), f"{name}: {p['title']} has no description")
                refs = [t["refId"] for t in p["targets"]]
                self.assertEqual(len(refs), len(set(refs)), f"{name}: {p['title']}")

    def test_variables_cover_what_queries_use(self):
        for name, d in gq.dashboards().items():
            defined = {v["name"] for v in d["templating"]["list"]}
            self.assertTrue({"datasource", "cluster"} <= defined, name)
            used = set()
            for p in gq.panels(d):
                for t in p["targets"]:
                    used.update(re.findall(r"\$(\w+)", t["expr"]))
            used -= {"__rate_interval", "__interval"}
            self.assertEqual(used - defined, set(), f"{name}: undefined variables")
            self.assertEqual(defined - used - {"datasource"}, set(), f"{name}: unused variables")

    def test_every_query_is_scoped_to_the_cluster(self):
        for q in gq.queries(SAMPLE):
            selectors = re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*\{([^}]*)\}", q.expr)
            self.assertTrue(selectors, f"{q.dashboard}: {q.panel}: {q.expr}")
            for s in selectors:
                self.assertIn('cluster="c1"', s, f"{q.dashboard}: {q.panel}: {q.expr}")

    def test_queries_name_only_exported_metrics(self):
        exported = exported_metric_names() | {"up", "ALERTS"}
        for q in gq.queries(SAMPLE):
            for metric in re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{", q.expr):
                base = re.sub(r"_(bucket|sum|count)$", "", metric)
                self.assertTrue(metric in exported or base in exported,
                                f"{q.dashboard}: {q.panel}: {metric} is not exported")

    def test_every_query_parses(self):
        promtool = shutil.which("promtool")
        if promtool is None:
            self.skipTest("promtool not found (Debian package prometheus)")
        rules = {"groups": [{"name": "dashboards", "rules": [
            {"record": f"dashboard_query_{i}", "expr": q.expr}
            for i, q in enumerate(gq.queries(SAMPLE))]}]}
        for v in gq.variable_queries(SAMPLE):
            rules["groups"][0]["rules"].append({"record": f"dashboard_variable_{v.name}",
                                                "expr": v.selector})
        with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
            yaml.safe_dump(rules, f)
            f.flush()
            out = subprocess.run([promtool, "check", "rules", f.name], capture_output=True,
                                 text=True, check=False)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_provider_points_at_the_installed_folder(self):
        with open(os.path.join(gq.DASHBOARD_DIR, "hostmesh-provider.yaml")) as f:
            provider = yaml.safe_load(f)
        self.assertEqual(provider["apiVersion"], 1)
        (p,) = provider["providers"]
        self.assertEqual(p["type"], "file")
        self.assertEqual(p["options"]["path"], "/usr/share/hostmesh/dashboards")


if __name__ == "__main__":
    ctest_unittest.main()
