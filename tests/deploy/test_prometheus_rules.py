#!/usr/bin/env python3
"""deploy/prometheus: the rules load (`promtool check rules`), every alert
has a severity and a runbook, `promtool test rules` passes, and every alert
is exercised there: at least one case where it fires and one where it stays
quiet. The example per-cluster and federation configs pass `promtool check
config`. Needs promtool (Debian's prometheus package); skips without it."""

import os
import shutil
import subprocess
import sys
import unittest

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ctest_unittest  # noqa: E402

SOURCE_DIR = os.environ.get("HOSTMESH_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
PROM_DIR = os.path.join(SOURCE_DIR, "deploy", "prometheus")
RULES = os.path.join(PROM_DIR, "hostmesh-rules.yml")
RULE_TESTS = os.path.join(PROM_DIR, "hostmesh-rules.test.yml")
PROMTOOL = shutil.which("promtool")


def load(path: str):
    with open(path) as f:
        return yaml.safe_load(f)


def promtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PROMTOOL, *args], cwd=PROM_DIR, capture_output=True, text=True,
                          check=False)


def alerts() -> list[dict]:
    return [r for g in load(RULES)["groups"] for r in g["rules"] if "alert" in r]


class PrometheusRules(unittest.TestCase):
    def test_rules_load(self):
        out = promtool("check", "rules", RULES)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_every_alert_has_severity_summary_and_runbook(self):
        names = [a["alert"] for a in alerts()]
        self.assertEqual(len(names), len(set(names)), "alert names repeat")
        for a in alerts():
            self.assertIn(a.get("labels", {}).get("severity"), ("page", "ticket"), a["alert"])
            for key in ("summary", "description", "runbook"):
                self.assertTrue(a.get("annotations", {}).get(key), f"{a['alert']}: no {key}")
            self.assertIn("hostmesh", a["alert"].lower())

    def test_unit_tests_pass(self):
        out = promtool("test", "rules", RULE_TESTS)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_every_alert_fires_and_stays_quiet_in_the_unit_tests(self):
        fires, quiet = set(), set()
        for case in load(RULE_TESTS)["tests"]:
            for t in case.get("alert_rule_test", []):
                (fires if t.get("exp_alerts") else quiet).add(t["alertname"])
        names = {a["alert"] for a in alerts()}
        self.assertEqual(names - fires, set(), "alerts never tested firing")
        self.assertEqual(names - quiet, set(), "alerts never tested staying quiet")
        self.assertEqual((fires | quiet) - names, set(), "tests of alerts that do not exist")

    def test_example_configs_check(self):
        for name in ("prometheus.yml", "federation.yml"):
            out = promtool("check", "config", os.path.join(PROM_DIR, name))
            self.assertEqual(out.returncode, 0, f"{name}: {out.stdout}{out.stderr}")

    def test_cluster_config_loads_the_rules_and_labels_targets(self):
        config = load(os.path.join(PROM_DIR, "prometheus.yml"))
        self.assertEqual(config["rule_files"], ["hostmesh-rules.yml"])
        jobs = {j["job_name"]: j for j in config["scrape_configs"]}
        self.assertEqual(set(jobs), {"hostmesh-analyzer", "hostmesh-agent"})
        for group in jobs["hostmesh-analyzer"]["static_configs"]:
            self.assertIn("cluster", group["labels"])

    def test_federation_pulls_summaries_not_per_pair_series(self):
        config = load(os.path.join(PROM_DIR, "federation.yml"))
        job = config["scrape_configs"][0]
        self.assertTrue(job["honor_labels"])
        self.assertEqual(job["metrics_path"], "/federate")
        matchers = " ".join(job["params"]["match[]"])
        self.assertNotIn("hostmesh_agent_", matchers)
        self.assertIn("ALERTS", matchers)


if __name__ == "__main__":
    if PROMTOOL is None:
        print("SKIPPED: promtool not found (Debian package prometheus)", file=sys.stderr)
        sys.exit(77)
    ctest_unittest.main()
