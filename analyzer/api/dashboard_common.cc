#include "analyzer/api/dashboard_parts.h"

namespace hostmesh::analyzer::api {
namespace {

// What every page of the analyzer shares: its look, and the script helpers
// that build elements (text only ever through textContent), format figures
// and fetch the API.
constexpr std::string_view kStyle = R"css(
:root { --fg:#1b1f24; --muted:#5b6570; --line:#d8dee4; --bg:#f6f8fa; --bad:#b42318;
        --badbg:#fde8e7; --warn:#8a5300; --warnbg:#fff4d6; --ok:#1a7f37; --okbg:#e6f4ea;
        --hot:#e8a317; --blind:#eceff2; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg);
       background:#fff; }
header { display:flex; align-items:center; gap:16px; padding:10px 20px; background:var(--bg);
         border-bottom:1px solid var(--line); position:sticky; top:0; z-index:2; }
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
details { margin-top:6px; }
h2.gap { margin-top:12px; }
details summary { cursor:pointer; color:var(--muted); font-size:13px; }
.pictures { display:flex; flex-wrap:wrap; gap:28px; align-items:flex-start; }
.picture h3 { font-size:13px; margin:0 0 4px; font-weight:600; }
.grid { display:grid; gap:2px; align-items:center; font-size:11px; }
.grid .hdr { color:var(--muted); white-space:nowrap; padding-right:4px; }
.grid .hdr.col { writing-mode:vertical-rl; transform:rotate(180deg); padding:0 0 4px; }
.grid .hdr.suspect { color:var(--bad); font-weight:700; }
.cell { width:14px; height:14px; border-radius:2px; background:var(--okbg);
        border:1px solid #b7dfc3; }
.cell.blind { background:var(--blind); border:1px dashed #9aa4ae; }
.cell.hotspot { background:var(--hot); border-color:var(--warn); }
.cell.lossy { background:var(--hot); border-color:var(--warn); }
.cell.culprit, .cell.down { background:var(--bad); border-color:var(--bad); }
.cell.absent { visibility:hidden; }
.legend { display:flex; gap:14px; flex-wrap:wrap; font-size:12px; color:var(--muted);
          margin:4px 0 8px; }
.legend .cell { display:inline-block; vertical-align:middle; margin-right:4px; }
.timeline { border:1px solid var(--line); border-radius:6px; padding:6px 8px; }
.tl-row { display:flex; align-items:center; height:20px; }
.tl-label { width:280px; flex:none; font-size:12px; overflow:hidden; text-overflow:ellipsis;
            white-space:nowrap; padding-right:8px; }
.tl-track { position:relative; flex:1; height:14px; background:var(--bg); border-radius:3px; }
.tl-bar { position:absolute; top:1px; height:12px; border-radius:3px; min-width:3px; }
.tl-bar.open { background:var(--bad); }
.tl-bar.resolved { background:#9aa4ae; }
.tl-win { position:absolute; top:0; height:14px; min-width:2px; }
.tl-win.ok { background:#b7dfc3; }
.tl-win.warn { background:var(--hot); }
.tl-win.bad { background:var(--bad); }
.tl-axis { display:flex; justify-content:space-between; margin-left:280px; font-size:11px;
           color:var(--muted); }
footer { color:var(--muted); font-size:12px; padding:0 20px 16px; }
)css";

constexpr std::string_view kHelpers = R"js(
const PERIOD_MS = 10000, TIMEOUT_MS = 5000;

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

// The problem type named from probes and NIC counters, and the sentence saying why.
function diagnosisText(i) {
  const d = i.diagnosis;
  if (!d || !d.rule) return "-";
  return d.type + ": " + d.evidence;
}

function card(k, v, bad) {
  const c = el("div", "card" + (bad ? " bad" : ""));
  c.appendChild(el("div", "k", k));
  c.appendChild(el("div", "v", v));
  return c;
}

async function getJson(path) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
  try {
    const r = await fetch(path, { signal: ctl.signal, cache: "no-store" });
    if (!r.ok) {
      const e = new Error(path + ": HTTP " + r.status);
      e.status = r.status;
      throw e;
    }
    return await r.json();
  } finally { clearTimeout(timer); }
}

)js";

}  // namespace

std::string_view DashboardStyle() {
  return kStyle;
}

std::string_view DashboardHelperScript() {
  return kHelpers;
}

}  // namespace hostmesh::analyzer::api
