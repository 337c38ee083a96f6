#include "analyzer/api/incident_page.h"

#include <string>

#include "analyzer/api/dashboard_parts.h"
#include "analyzer/api/render_evidence.h"

namespace hostmesh::analyzer::api {
namespace {

constexpr std::string_view kHead = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hostmesh incident</title>
<style>
)html";

constexpr std::string_view kBody = R"html(
svg text { font-size:11px; fill:var(--muted); }
.ln { fill:none; stroke-width:1.6; }
.ln.suspect { stroke:var(--bad); stroke-width:2.4; }
.ln.sibling { stroke:#7f8b96; }
.ln.background { stroke:var(--warn); stroke-dasharray:4 3; }
.mark { stroke:var(--fg); stroke-dasharray:2 3; }
.hop { fill:var(--okbg); stroke:#b7dfc3; }
.hop.suspect { fill:var(--bad); stroke:var(--bad); }
.hop.suspect + text { fill:#fff; }
.edge { stroke:#9aa4ae; fill:none; }
.edge.failing { stroke:var(--bad); }
</style>
</head>
<body>
<header>
  <h1 id="title">hostmesh incident</h1>
  <span id="badge" class="wait">connecting&hellip;</span>
  <a href="../">on-call page</a>
  <span id="updated"></span>
</header>
<main id="main">
  <div id="banner">analyzer unreachable</div>
  <section><div class="cards" id="cards"></div>
    <div id="diagnosis" class="sub"></div></section>
  <section><h2>Timeline: loss per 5 s <span class="n" id="n-timeline"></span></h2>
    <div class="legend"><span style="color:var(--bad)">&#9644; suspect</span>
      <span style="color:#7f8b96">&#9644; healthy siblings</span>
      <span style="color:var(--warn)">&#9476; fleet background (per window)</span>
      <span>&#9482; opened, first timeout</span></div>
    <div id="timeline"></div></section>
  <section><h2>Suspect and siblings <span class="n" id="n-groups"></span></h2>
    <div id="groups"></div></section>
  <section><h2>Paths of the 5-tuples followed <span class="n" id="n-paths"></span></h2>
    <div id="path-picture"></div><div id="paths"></div></section>
  <section><h2>Our verdict beside the paper's, per window <span class="n" id="n-verdicts"></span></h2>
    <div id="verdicts"></div></section>
  <section><h2>NIC counters of the involved hosts <span class="n" id="n-counters"></span></h2>
    <div id="counters"></div></section>
  <section><h2>Flight recorders <span class="n" id="n-flight"></span></h2>
    <div id="flight"></div></section>
</main>
<footer>Refreshes every 10 s from <a id="api-incident">the incident</a> and
  <a id="api-evidence">its evidence</a> (JSON).</footer>
<script>
"use strict";
)html";

constexpr std::string_view kScript = R"js(
const ID = Number(location.pathname.split("/").filter(Boolean).pop());
const BASE = "../api/v1/incidents/" + ID;
const BUCKET_NS = 5e9;
let lastOk = null;

// Per group and 5 s bucket: probes and timeouts; and the onset.
function bucketize(ev) {
  const rows = ev.probes.rows, tuples = ev.tuples;
  const from = ev.capture.from_ns, to = Math.max(ev.capture.to_ns, from + BUCKET_NS);
  const n = Math.ceil((to - from) / BUCKET_NS);
  const groups = ev.groups.map(() => Array.from({ length: n }, () => [0, 0]));
  const stats = ev.groups.map(() => ({ probes: 0, timeouts: 0, firstTimeout: 0, lastOk: 0 }));
  for (const [t, send, timeout] of rows) {
    const g = tuples[t] ? tuples[t].group : -1;
    if (g < 0 || g >= groups.length) continue;
    const b = Math.min(n - 1, Math.max(0, Math.floor((send - from) / BUCKET_NS)));
    groups[g][b][0]++;
    const s = stats[g];
    s.probes++;
    if (timeout) {
      groups[g][b][1]++;
      s.timeouts++;
      if (!s.firstTimeout || send < s.firstTimeout) s.firstTimeout = send;
    }
  }
  for (const [t, send, timeout] of rows) {
    const g = tuples[t] ? tuples[t].group : -1, s = stats[g];
    if (s && !timeout && s.firstTimeout && send < s.firstTimeout && send > s.lastOk) s.lastOk = send;
  }
  return { from, to, n, groups, stats };
}

function svg(tag, attrs, text) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = String(text);
  return e;
}

function groupName(g) {
  if (g.kind === "rnic") return g.host + " " + (g.nic_name || "nic " + g.nic);
  if (g.kind === "host") return "host " + g.host;
  return g.kind + " " + g.name;
}

function renderTimeline(ev, b) {
  const W = 1100, H = 220, L = 50, R = 10, T = 10, B = 24;
  const box = document.getElementById("timeline");
  box.replaceChildren();
  const s = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, id: "timeline-svg" });
  const x = t => L + (W - L - R) * (t - b.from) / (b.to - b.from);
  let top = 0;
  b.groups.forEach(g => g.forEach(([p, f]) => { if (p) top = Math.max(top, f / p); }));
  for (const v of ev.verdicts) top = Math.max(top, v.background_loss || 0);
  top = top > 0 ? Math.min(1, top * 1.1) : 0.01;
  const y = v => T + (H - T - B) * (1 - v / top);
  s.appendChild(svg("line", { x1: L, y1: y(0), x2: W - R, y2: y(0), stroke: "#d8dee4" }));
  s.appendChild(svg("text", { x: 2, y: y(top) + 10 }, pct(top)));
  s.appendChild(svg("text", { x: 2, y: y(0) }, "0%"));
  s.appendChild(svg("text", { x: L, y: H - 6 }, clock(b.from)));
  s.appendChild(svg("text", { x: W - R - 70, y: H - 6 }, clock(b.to)));
  // Siblings first, the suspect on top of them.
  const order = ev.groups.map((g, i) => i).sort((a, c) => (a === 0) - (c === 0));
  for (const i of order) {
    const pts = [];
    b.groups[i].forEach(([p, f], k) => {
      if (p) pts.push(x(b.from + (k + 0.5) * BUCKET_NS).toFixed(1) + "," + y(f / p).toFixed(1));
    });
    if (pts.length < 1) continue;
    const line = svg("polyline", { class: "ln " + (i === 0 ? "suspect" : "sibling"),
                                   points: pts.join(" "), "data-group": i });
    line.appendChild(svg("title", {}, groupName(ev.groups[i])));
    s.appendChild(line);
  }
  const bg = ev.verdicts.filter(v => v.end_ns > b.from && v.start_ns < b.to).map(v =>
      x(Math.max(v.start_ns, b.from)).toFixed(1) + "," + y(v.background_loss || 0).toFixed(1) +
      " " + x(Math.min(v.end_ns, b.to)).toFixed(1) + "," + y(v.background_loss || 0).toFixed(1));
  if (bg.length) s.appendChild(svg("polyline", { class: "ln background", points: bg.join(" ") }));
  const mark = (t, label, cls) => {
    if (!t || t < b.from || t > b.to) return;
    s.appendChild(svg("line", { class: "mark " + cls, x1: x(t), x2: x(t), y1: T, y2: H - B }));
    s.appendChild(svg("text", { x: x(t) + 3, y: T + 10 }, label));
  };
  mark(ev.opened_ns, "opened", "opened");
  mark(b.stats[0] ? b.stats[0].firstTimeout : 0, "first timeout", "first-timeout");
  box.appendChild(s);
  count("n-timeline", "(" + clock(b.from) + " to " + clock(b.to) + ", " + ev.probes.rows.length +
        " probes" + (ev.capture.probes_thinned ? ", successes thinned 1 in " +
        ev.capture.thinned_every : "") + ")");
}

// The distinct paths, hop by hop: a column per hop, a box per link, the
// suspect's links red, edges red where their 5-tuples lost probes.
function renderPaths(ev, b) {
  const perTuple = ev.tuples.map(() => [0, 0]);
  for (const [t, , timeout] of ev.probes.rows) {
    if (!perTuple[t]) continue;
    perTuple[t][0]++;
    if (timeout) perTuple[t][1]++;
  }
  const suspectLinks = new Set();
  const g0 = ev.groups[0];
  if (g0 && g0.kind === "link") suspectLinks.add(g0.link);
  const paths = new Map();
  ev.tuples.forEach((t, i) => {
    if (!t.path || !t.path.length) return;
    const key = t.path.map(l => l ? l.link : "?").join(">");
    const p = paths.get(key) || { path: t.path, group: t.group, tuples: 0, probes: 0, timeouts: 0 };
    p.tuples++;
    p.probes += perTuple[i][0];
    p.timeouts += perTuple[i][1];
    paths.set(key, p);
  });
  const list = [...paths.values()].sort((a, c) => c.timeouts - a.timeouts || c.tuples - a.tuples);
  count("n-paths", "(" + ev.tuples.length + " 5-tuples" +
        (ev.capture.tuples_capped ? ", a sample" : "") + ", " + list.length + " paths)");
  table("paths", list.slice(0, 20), [
    ["group", p => p.group === 0 ? tag("bad", "suspect") : "sibling"],
    ["path", p => {
      const span = el("span");
      p.path.forEach((l, k) => {
        if (k) span.appendChild(document.createTextNode(" \u2192 "));
        const name = l ? l.name : "?";
        span.appendChild(l && suspectLinks.has(l.link) ? tag("bad", name) : el("span", "", name));
      });
      return span;
    }, "wrap"],
    ["5-tuples", p => p.tuples, "num"], ["probes", p => p.probes, "num"],
    ["timeouts", p => p.timeouts, "num"]],
    "no path known for the 5-tuples followed", p => p.timeouts ? "warn" : "");
  drawPathPicture(list.slice(0, 24), suspectLinks);
}

function drawPathPicture(list, suspectLinks) {
  const box = document.getElementById("path-picture");
  box.replaceChildren();
  if (!list.length) return;
  const hops = Math.max(...list.map(p => p.path.length));
  const columns = Array.from({ length: hops }, () => new Map());
  for (const p of list) p.path.forEach((l, k) => {
    const key = l ? l.link : "?";
    if (!columns[k].has(key)) columns[k].set(key, { link: l, row: columns[k].size });
  });
  const rows = Math.max(...columns.map(c => c.size));
  const CW = 190, BW = 150, RH = 26, W = hops * CW, H = rows * RH + 8;
  const s = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, id: "path-svg" });
  const at = (k, key) => { const n = columns[k].get(key); return [k * CW, 4 + n.row * RH]; };
  for (const p of list) for (let k = 1; k < p.path.length; k++) {
    const [x1, y1] = at(k - 1, p.path[k - 1] ? p.path[k - 1].link : "?");
    const [x2, y2] = at(k, p.path[k] ? p.path[k].link : "?");
    s.appendChild(svg("path", { class: "edge" + (p.timeouts ? " failing" : ""),
      d: "M" + (x1 + BW) + "," + (y1 + 10) + " C" + (x1 + BW + 20) + "," + (y1 + 10) + " " +
         (x2 - 20) + "," + (y2 + 10) + " " + x2 + "," + (y2 + 10) }));
  }
  columns.forEach((c, k) => c.forEach((n, key) => {
    const [x0, y0] = at(k, key);
    const suspect = n.link && suspectLinks.has(n.link.link);
    s.appendChild(svg("rect", { class: "hop" + (suspect ? " suspect" : ""), x: x0, y: y0,
                                width: BW, height: 20, rx: 3 }));
    const name = n.link ? n.link.name : "unknown";
    s.appendChild(svg("text", { x: x0 + 4, y: y0 + 14 }, name.length > 24 ? name.slice(0, 23) + "\u2026" : name));
  }));
  box.appendChild(s);
}

// Ours: the loss estimate and confidence. The paper's Algorithm 1: the link
// with the most votes that window; its RNIC rule: over 10% of probes lost.
function paperVerdict(ev, v) {
  const g0 = ev.groups[0] || {};
  if (g0.kind === "rnic") return "-";
  let best = { name: "this suspect", votes: v.votes };
  for (const r of v.rivals) if (r.votes > best.votes) best = { name: r.name, votes: r.votes };
  return best.name === "this suspect" ? (v.votes ? "the same (" + v.votes + " votes)" : "nothing")
                                      : best.name + " (" + best.votes + " votes vs " + v.votes + ")";
}

function render(inc, ev) {
  document.getElementById("title").textContent = "incident #" + ID + " " + inc.kind;
  const b = ev ? bucketize(ev) : null;
  const cards = document.getElementById("cards");
  cards.replaceChildren(
    card("kind", inc.kind, inc.open), card("suspect", suspectText(inc.suspect), inc.open),
    card("state", inc.open ? "open" : "resolved", inc.open),
    card("confidence", inc.confidence.toFixed(2)),
    card("first seen", clock(inc.first_seen_ns) + " (" + ago(inc.first_seen_ns) + ")"),
    card("last seen", clock(inc.last_seen_ns)), card("windows", inc.windows));
  const d = inc.diagnosis || {};
  document.getElementById("diagnosis").textContent = d.rule
      ? "diagnosis: " + d.type + " (rule: " + d.rule + "): " + d.evidence : "diagnosis: none yet";
  if (!ev) {
    for (const id of ["timeline", "groups", "paths", "verdicts", "counters", "flight"]) {
      const box = document.getElementById(id);
      box.replaceChildren(el("div", "empty", "no evidence kept for this incident"));
    }
    return;
  }
  renderTimeline(ev, b);
  count("n-groups", "(" + ev.groups.length + ")");
  table("groups", ev.groups.map((g, i) => ({ g, s: b.stats[i] })), [
    ["role", r => r.g.role === "suspect" ? tag("bad", "suspect") : "sibling"],
    ["component", r => groupName(r.g)], ["probes", r => r.s.probes, "num"],
    ["timeouts", r => r.s.timeouts, "num"],
    ["loss", r => r.s.probes ? pct(r.s.timeouts / r.s.probes) : "-", "num"],
    ["last answered", r => clock(r.s.lastOk)], ["first timeout", r => clock(r.s.firstTimeout)]],
    "no group", r => r.g.role === "suspect" ? "bad" : "");
  renderPaths(ev, b);
  count("n-verdicts", "(" + ev.verdicts.length + " windows" + (ev.capture.verdicts_dropped
        ? ", " + ev.capture.verdicts_dropped + " in the middle left out" : "") + ")");
  table("verdicts", ev.verdicts.slice().reverse(), [
    ["window", v => clock(v.start_ns)],
    ["ours: loss", v => pct(v.loss), "num"], ["confidence", v => v.confidence.toFixed(2), "num"],
    ["failed / good", v => v.failures + " / " + v.good, "num"],
    ["paper's Algorithm 1 would blame", v => paperVerdict(ev, v), "wrap"],
    ["rivals", v => v.rivals.map(r => r.name + " " + pct(r.loss)).join(", ") || "-", "wrap"],
    ["diagnosis", v => v.diagnosis + (v.rule ? " (" + v.rule + ")" : ""), "wrap"]],
    "no window found it");
  const moved = [];
  for (const c of ev.counters) for (const [k, v] of Object.entries(c.deltas))
    if (v > 0) moved.push({ agent: c.agent_id, nic: c.nic, at: c.end_ns, counter: k, delta: v,
                            port: c.port_state });
  count("n-counters", "(" + ev.counters.length + " reads, " + moved.length + " moved)");
  table("counters", moved.slice(-200).reverse(), [
    ["at", m => clock(m.at)], ["agent", m => m.agent], ["nic", m => m.nic, "num"],
    ["counter", m => m.counter], ["delta", m => "+" + m.delta, "num"],
    ["port state", m => m.port, "num"]], "no counter moved on the involved NICs");
  // Probes and traces are counted (the evidence's probes show them); the
  // rest, what the agent saw happen, are listed, latest first.
  const events = [], kinds = {};
  const records = ev.flight_records || [];
  for (const r of records) for (const e of r.events) {
    kinds[e.kind] = (kinds[e.kind] || 0) + 1;
    if (e.kind !== "probe" && e.kind !== "trace") events.push({ agent: r.agent_id, ...e });
  }
  events.sort((a, c) => a.time_ns - c.time_ns);
  count("n-flight", "(" + records.length + " agents; " + (Object.entries(kinds)
        .map(([k, n]) => n + " " + k).join(", ") || "no events") + ")");
  table("flight", events.slice(-100).reverse(), [
    ["time", e => clock(e.time_ns)], ["agent", e => e.agent], ["kind", e => e.kind],
    ["nic", e => e.nic, "num"],
    ["detail", e => e.text || (e.value_ns ? fmtNs(e.value_ns) : ""), "wrap"]],
    records.length ? "nothing but probes and traces recorded" : "no flight recorder kept",
    e => e.kind === "log" ? "warn" : "");
}

async function refresh() {
  const main = document.getElementById("main"), badge = document.getElementById("badge");
  try {
    const inc = await getJson(BASE);
    const ev = await getJson(BASE + "/evidence").catch(e => e.status === 404 ? null
                                                                           : Promise.reject(e));
    render(inc, ev);
    lastOk = new Date();
    main.classList.remove("stale");
    badge.className = "live";
    badge.textContent = "live";
    document.getElementById("updated").textContent =
        "updated " + lastOk.toLocaleTimeString() + ", every 10 s";
  } catch (e) {
    main.classList.add("stale");
    badge.className = "down";
    badge.textContent = e && e.status === 404 ? "no such incident" : "analyzer unreachable";
    document.getElementById("banner").textContent = badge.textContent + " (" +
        (e && e.message ? e.message : e) + ")" +
        (lastOk ? "; showing data from " + lastOk.toLocaleTimeString() : "");
  }
}
document.getElementById("api-incident").href = BASE;
document.getElementById("api-evidence").href = BASE + "/evidence";
refresh();
setInterval(refresh, PERIOD_MS);
</script>
</body>
</html>
)js";

}  // namespace

std::string_view IncidentPageHtml() {
  static const std::string page = std::string(kHead) + std::string(DashboardStyle()) +
                                  std::string(kBody) + std::string(DashboardHelperScript()) +
                                  std::string(kScript);
  return page;
}

std::optional<std::uint64_t> IncidentPageId(std::string_view rest) {
  const auto path = ParseIncidentPath(rest);
  if (!path || path->evidence) return std::nullopt;
  return path->id;
}

}  // namespace hostmesh::analyzer::api
