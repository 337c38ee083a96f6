"""The queries of the Grafana dashboards in dashboards/, ready to run against
Prometheus: every panel's targets and every template variable, with the
template variables substituted as Grafana would. Shared by the offline test
(test_dashboards.py) and the e2e test against a real Prometheus
(tests/e2e/test_prometheus.py)."""

from __future__ import annotations

import glob
import json
import os
import re
from dataclasses import dataclass

SOURCE_DIR = os.environ.get("HOSTMESH_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
DASHBOARD_DIR = os.path.join(SOURCE_DIR, "dashboards")
# label_values(METRIC_SELECTOR, LABEL): Grafana's Prometheus variable query.
LABEL_VALUES = re.compile(r"^label_values\((?P<selector>.+),\s*(?P<label>\w+)\)$")


@dataclass
class Query:
    dashboard: str
    panel: str
    ref: str
    expr: str  # substituted
    instant: bool


@dataclass
class VariableQuery:
    dashboard: str
    name: str
    selector: str  # substituted; values of `label` among the series it matches
    label: str


def dashboards() -> dict[str, dict]:
    """File name -> the dashboard's JSON model."""
    out = {}
    for path in sorted(glob.glob(os.path.join(DASHBOARD_DIR, "*.json"))):
        with open(path) as f:
            out[os.path.basename(path)] = json.load(f)
    return out


def panels(dashboard: dict) -> list[dict]:
    """Every panel, those inside rows included; rows themselves left out."""
    out = []
    for p in dashboard.get("panels", []):
        if p.get("type") == "row":
            out.extend(p.get("panels", []))
        else:
            out.append(p)
    return out


def substitute(expr: str, values: dict[str, str]) -> str:
    """$name, ${name} and [[name]] as Grafana expands them (single values)."""
    def one(m: re.Match) -> str:
        name = m.group(1) or m.group(2) or m.group(3)
        if name not in values:
            raise KeyError(f"no value for template variable {name!r} in {expr!r}")
        return values[name]
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]", one, expr)


def queries(values: dict[str, str]) -> list[Query]:
    out = []
    for name, d in dashboards().items():
        for p in panels(d):
            for t in p.get("targets", []):
                out.append(Query(name, p.get("title", "?"), t.get("refId", "?"),
                                 substitute(t["expr"], values), bool(t.get("instant"))))
    return out


def variable_queries(values: dict[str, str]) -> list[VariableQuery]:
    out = []
    for name, d in dashboards().items():
        for v in d.get("templating", {}).get("list", []):
            if v.get("type") != "query":
                continue
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            m = LABEL_VALUES.match(q)
            if not m:
                raise ValueError(f"{name}: variable {v['name']}: not a label_values() query: {q}")
            out.append(VariableQuery(name, v["name"], substitute(m.group("selector"), values),
                                     m.group("label")))
    return out
