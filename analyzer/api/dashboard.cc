#include "analyzer/api/dashboard.h"

namespace hostmesh::analyzer::api {
namespace {

// API paths are relative, so the page also works behind a reverse proxy that
// serves the analyzer under a prefix ending in '/'. Text from the API only ever
// reaches the page through textContent, never as HTML.
constexpr std::string_view kHtml = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hostmesh analyzer</title>
<style>
:root { --fg:#1b1f24; --muted:#5b6570; --line:#d8dee4; --bg:#f6f8fa; --bad:#b42318;
        --badbg:#fde8e7; --warn:#8a5300; --warnbg:#fff4d6; --ok:#1a7f37; --okbg:#e6f4ea; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg);
       background:#fff; }
header { display:flex; align-items:center; gap:16px; padding:10px 20px; background:var(--bg);
         border-bottom:1px solid var(--line); position:sticky; top:0; }
header h1 { font-size:18px; margin:0; }
#badge { padding:3px 10px; border-radius:12px; font-weight:600; font-size:13px; }
#badge.live { background:var(--okbg); color:var(--ok); }
#badge.down { background:var(--badbg); color:var(--bad); }
#badge.wait { background:var(--bg); color:var(--muted); border:1px solid var(--line); }
#updated { color:var(--muted); margin-left:auto; font-size:13px; }
main { padding:8px 20px 24px; }
main.stale section { opacity:.55; }
#banner { display:none; margin:12px 0 0; padding:10px 14px; border-radius:6px;
          background:var(--badbg); color:var(--bad); font-weight:600; }
main.stale #banner { display:block; }
.cards { display:flex; flex-wrap:wrap; gap:10px; margin:12px 0 4px; }
.card { border:1px solid var(--line); border-radius:6px; padding:8px 12px; min-width:130px; }
.card .k { color:var(--muted); font-size:12px; }
.card .v { font-size:18px; font-weight:600; font-variant-numeric:tabular-nums; }
.card.bad { border-color:var(--bad); background:var(--badbg); }
section { margin-top:18px; }
section h2 { font-size:15px; margin:0 0 6px; }
section h2 .n { color:var(--muted); font-weight:400; }
table { border-collapse:collapse; width:100%; font-variant-numeric:tabular-nums; }
th, td { text-align:left; padding:4px 8px; border-bottom:1px solid var(--line);
         vertical-align:top; white-space:nowrap; }
td.wrap { white-space:normal; }
th { background:var(--bg); font-weight:600; font-size:12px; color:var(--muted); }
td.num, th.num { text-align:right; }
tr.bad td { background:var(--badbg); }
tr.warn td { background:var(--warnbg); }
.empty { color:var(--muted); font-style:italic; padding:6px 8px; }
.tag { display:inline-block; padding:0 6px; border-radius:4px; font-size:12px; font-weight:600; }
.tag.bad { background:var(--badbg); color:var(--bad); }
.tag.warn { background:var(--warnbg); color:var(--warn); }
.tag.ok { background:var(--okbg); color:var(--ok); }
.sub { color:var(--muted); font-size:12px; }
footer { color:var(--muted); font-size:12px; padding:0 20px 16px; }
</style>
</head>
<body>
<header>
  <h1>hostmesh analyzer</h1>
  <span id="badge" class="wait">connecting&hellip;</span>
  <span id="updated"></span>
</header>
<main id="main">
  <div id="banner">analyzer unreachable</div>
  <section id="status"><div class="cards" id="cards"></div></section>
  <section><h2>Open incidents <span class="n" id="n-incidents"></span></h2>
    <div id="incidents"></div></section>
  <section><h2>RNICs flagged <span class="n" id="n-rnics"></span></h2>
    <div id="rnics"></div></section>
  <section><h2>Suspicious links (loss) <span class="n" id="n-links"></span></h2>
    <div id="links"></div></section>
  <section><h2>Latency hotspots <span class="n" id="n-hotspots"></span></h2>
    <div id="hotspots"></div></section>
  <section><h2>SLA, latest window <span class="n" id="n-sla"></span></h2>
    <div id="sla"></div></section>
</main>
<footer>Refreshes every 10 s from
  <a href="api/v1/status">api/v1/status</a>, <a href="api/v1/rnics">rnics</a>,
  <a href="api/v1/links?suspicious">links?suspicious</a>,
  <a href="api/v1/links?kind=latency&amp;suspicious">links?kind=latency&amp;suspicious</a>,
  <a href="api/v1/incidents">incidents</a>, <a href="api/v1/sla">sla</a>;
  also <a href="api/v1/switches">switches</a>, <a href="api/v1/coverage">coverage</a>,
  <a href="api/v1/topology">topology</a>, <a href="metrics">metrics</a>.</footer>
<script>
"use strict";
const PERIOD_MS = 10000, TIMEOUT_MS = 5000;
const PATHS = { status: "api/v1/status", rnics: "api/v1/rnics",
                links: "api/v1/links?suspicious", hotspots: "api/v1/links?kind=latency&suspicious",
                incidents: "api/v1/incidents", sla: "api/v1/sla" };
let lastOk = null;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function fmtNs(v) {
  if (v === null || v === undefined) return "-";
  if (v >= 1e9) return (v / 1e9).toFixed(2) + " s";
  if (v >= 1e6) return (v / 1e6).toFixed(2) + " ms";
  if (v >= 1e3) return (v / 1e3).toFixed(1) + " \u00b5s";
  return Math.round(v) + " ns";
}
function pct(x) {
  if (x === null || x === undefined) return "-";
  return x === 0 ? "0%" : (x * 100).toPrecision(3) + "%";
}
function secs(x) { return x === null || x === undefined ? "-" : x.toFixed(1) + " s"; }
function clock(ns) { return ns ? new Date(ns / 1e6).toLocaleTimeString() : "-"; }
function ago(ns) {
  if (!ns) return "";
  const s = Math.max(0, Math.round((Date.now() - ns / 1e6) / 1000));
  return s < 120 ? s + " s ago" : s < 7200 ? Math.round(s / 60) + " min ago"
                                            : Math.round(s / 3600) + " h ago";
}
function linkName(l) {
  if (!l.ends) return l.name;
  return l.name + "  (" + l.ends.map(e => e.ip).join(" - ") + ")";
}

// cols: [header, cell(row) -> string | Node, "num"?]; rowClass(row) -> "" | "bad" | "warn"
function table(target, rows, cols, empty, rowClass) {
  const box = document.getElementById(target);
  box.replaceChildren();
  if (!rows.length) { box.appendChild(el("div", "empty", empty)); return; }
  const t = el("table"), head = el("tr");
  for (const [h, , kind] of cols) head.appendChild(el("th", kind || "", h));
  t.appendChild(el("thead")).appendChild(head);
  const body = t.appendChild(el("tbody"));
  for (const r of rows) {
    const tr = el("tr", rowClass ? rowClass(r) : "");
    for (const [, cell, kind] of cols) {
      const v = cell(r), td = el("td", kind || "");
      if (v instanceof Node) td.appendChild(v); else td.textContent = v;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  box.appendChild(t);
}
function count(id, text) { document.getElementById(id).textContent = text; }
function tag(cls, text) { return el("span", "tag " + cls, text); }

function suspectText(s) {
  if (s.nic !== undefined) return s.host + " " + (s.nic_name || "nic " + s.nic) +
                                  (s.ip ? " (" + s.ip + ")" : "") + " rail " + s.rail;
  if (s.switch !== undefined) return "switch " + (s.name || s.switch);
  if (s.link !== undefined) return linkName(s);
  return s.host || "?";
}

function evidenceText(i) {
  const e = i.evidence;
  if (i.kind === "host_processing_delay")
    return "processing p90 " + fmtNs(e.processing_p90_ns) + " vs fleet median " +
           fmtNs(e.fleet_median_p90_ns);
  const votes = ", paper votes " + e.votes;
  if (i.kind === "switch")
    return e.links.length + " links blamed: " + e.links.map(l => l.name).join(", ") + votes;
  const what = i.kind === "latency_hotspot" ? "slow " : "failed ";
  return what + e.failures + ", fine " + e.good + ", loss " + pct(e.loss) +
         (i.suspect.link !== undefined ? votes : "");
}

function card(k, v, bad) {
  const c = el("div", "card" + (bad ? " bad" : ""));
  c.appendChild(el("div", "k", k));
  c.appendChild(el("div", "v", v));
  return c;
}

function render(d) {
  const st = d.status, cards = document.getElementById("cards");
  const cl = d.sla.cluster;
  cards.replaceChildren(
    card("open incidents", st.open_incidents, st.open_incidents > 0),
    card("agents present / known", st.agents_present + " / " + st.agents_known,
         st.agents_present < st.agents_known),
    card("window lag", secs(st.window_lag_seconds),
         st.window_lag_seconds !== null &&
         st.window_lag_seconds > 2 * (st.window_seconds + st.grace_seconds)),
    card("RNIC drop rate", cl ? pct(cl.rnic_drop_rate) : "-", cl && cl.rnic_drop_rate > 0),
    card("network drop rate", cl ? pct(cl.network_drop_rate) : "-",
         cl && cl.network_drop_rate > 0),
    card("latency p99", cl ? fmtNs(cl.latency_ns.p99) : "-"),
    card("window", st.window ? clock(st.window.start_ns) + " + " + st.window_seconds + " s"
                             : "none judged yet"),
    card("version", st.version + (st.inventory_loaded ? "" : " (no inventory)")));

  const open = d.incidents.open;
  count("n-incidents", "(" + open.length + " open, " + d.incidents.resolved.length +
        " recently resolved)");
  table("incidents", open, [
    ["kind", i => tag(i.kind.startsWith("rnic") ? "bad" : "warn", i.kind)],
    ["suspect", i => suspectText(i.suspect), "wrap"],
    ["confidence", i => i.confidence.toFixed(2), "num"],
    ["since", i => clock(i.first_seen_ns) + " (" +
                   ago(i.first_seen_ns) + ")"],
    ["last seen", i => clock(i.last_seen_ns)],
    ["windows", i => i.windows, "num"],
    ["evidence", i => evidenceText(i), "wrap"],
  ], "no open incidents", () => "");

  const all = d.rnics.rnics;
  const bad = all.filter(r => r.state !== "ok" || r.paper_anomalous);
  const ours = bad.filter(r => r.state !== "ok").length;
  count("n-rnics", "(" + ours + " anomalous, " + (bad.length - ours) +
        " only by the paper's timeout rule; " + all.length + " RNICs judged)");
  table("rnics", bad, [
    ["host", r => r.host], ["nic", r => r.nic_name || String(r.nic)], ["ip", r => r.ip],
    ["rail", r => r.rail, "num"],
    ["state", r => tag(r.state === "ok" ? "ok" : r.state === "down" ? "bad" : "warn", r.state)],
    ["paper rule", r => r.paper_anomalous ? tag("warn", "anomalous") : "ok"],
    ["loss", r => pct(r.loss), "num"],
    ["timeouts / probes", r => r.timeouts + " / " + r.probes, "num"],
    ["sticky until", r => r.anomalous_until_ns ? clock(r.anomalous_until_ns) : "-"],
  ], all.length ? "all " + all.length + " RNICs ok" : "no RNICs judged yet",
     r => r.state === "down" ? "bad" : r.state === "lossy" ? "warn" : "");

  const linkCols = (what, share) => [
    ["rank", l => l.rank, "num"], ["link", l => l.name],
    ["ends", l => l.ends ? l.ends.map(e => e.ip).join(" - ") : "-"],
    [share, l => pct(l.loss), "num"],
    [what + " / good", l => l.failures + " / " + l.good, "num"],
    ["score", l => l.score.toFixed(2), "num"], ["paper votes", l => l.votes, "num"]];
  count("n-links", "(" + d.links.links.length + ")");
  table("links", d.links.links, linkCols("failed", "loss"), "no link blamed", () => "bad");
  count("n-hotspots", "(" + d.hotspots.links.length + (d.hotspots.slow_threshold_ns
        ? ", slow above " + fmtNs(d.hotspots.slow_threshold_ns) : "") + ")");
  table("hotspots", d.hotspots.links, linkCols("slow", "slow share"), "no latency hotspot", () => "warn");

  const sla = d.sla;
  const rows = sla.cluster ? [Object.assign({ scope: "cluster" }, sla.cluster)] : [];
  for (const r of sla.rails) rows.push(Object.assign({ scope: "rail " + r.rail }, r));
  count("n-sla", "(" + sla.hosts.length + (sla.hosts.length === 1 ? " host" : " hosts") +
        "; per host in api/v1/sla)");
  table("sla", rows, [
    ["scope", r => r.scope], ["probes", r => r.probes, "num"],
    ["RNIC drops", r => pct(r.rnic_drop_rate), "num"],
    ["network drops", r => pct(r.network_drop_rate), "num"],
    ["latency p50", r => fmtNs(r.latency_ns.p50), "num"],
    ["p90", r => fmtNs(r.latency_ns.p90), "num"],
    ["p99", r => fmtNs(r.latency_ns.p99), "num"],
    ["p99.9", r => fmtNs(r.latency_ns.p999), "num"],
    ["processing p50", r => fmtNs(r.processing_ns.p50), "num"],
    ["p99", r => fmtNs(r.processing_ns.p99), "num"],
  ], "no window judged yet",
     r => r.rnic_drop_rate > 0 || r.network_drop_rate > 0 ? "warn" : "");
}

async function getJson(path) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
  try {
    const r = await fetch(path, { signal: ctl.signal, cache: "no-store" });
    if (!r.ok) throw new Error(path + ": HTTP " + r.status);
    return await r.json();
  } finally { clearTimeout(timer); }
}

async function refresh() {
  const main = document.getElementById("main"), badge = document.getElementById("badge");
  try {
    const keys = Object.keys(PATHS);
    const values = await Promise.all(keys.map(k => getJson(PATHS[k])));
    const d = {};
    keys.forEach((k, i) => { d[k] = values[i]; });
    render(d);
    lastOk = new Date();
    main.classList.remove("stale");
    badge.className = "live";
    badge.textContent = "live";
    document.getElementById("updated").textContent =
        "updated " + lastOk.toLocaleTimeString() + ", every 10 s";
  } catch (e) {
    main.classList.add("stale");
    badge.className = "down";
    badge.textContent = "analyzer unreachable";
    document.getElementById("banner").textContent = "analyzer unreachable (" +
        (e && e.message ? e.message : e) + "); " +
        (lastOk ? "showing data from " + lastOk.toLocaleTimeString()
                : "no data received yet") + "; retrying every 10 s";
  }
}
refresh();
setInterval(refresh, PERIOD_MS);
</script>
</body>
</html>
)html";

}  // namespace

std::string_view DashboardHtml() {
  return kHtml;
}

}  // namespace hostmesh::analyzer::api
