#include "analyzer/api/dashboard.h"

#include <string>

#include "analyzer/api/dashboard_parts.h"

namespace hostmesh::analyzer::api {
namespace {

// API paths are relative, so the page also works behind a reverse proxy that
// serves the analyzer under a prefix ending in '/'. Text from the API only ever
// reaches the page through textContent, never as HTML.
constexpr std::string_view kHead = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hostmesh analyzer</title>
<style>
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
  <section><h2>Fabric <span class="n" id="n-fabric"></span></h2>
    <div class="legend"><span><span class="cell"></span>fine</span>
      <span><span class="cell culprit"></span>blamed for loss / RNIC down</span>
      <span><span class="cell hotspot"></span>latency hotspot / RNIC lossy</span>
      <span><span class="cell blind"></span>not crossed by a traced probe</span></div>
    <div class="pictures" id="fabric"></div></section>
  <section><h2>Open incidents <span class="n" id="n-incidents"></span></h2>
    <div id="incidents"></div>
    <h2 class="gap">Timeline, up to the last hour <span class="n" id="n-timeline"></span></h2>
    <div id="timeline" class="timeline"></div></section>
  <section><h2>RNICs <span class="n" id="n-rnics"></span></h2>
    <div id="rnics"></div>
    <details id="all-rnics-box"><summary id="all-rnics-summary">every RNIC</summary>
      <div id="all-rnics"></div></details></section>
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
  <a href="api/v1/incidents">incidents</a>, <a href="api/v1/sla">sla</a>,
  <a href="api/v1/sla/history">sla/history</a>, <a href="api/v1/coverage">coverage</a>,
  <a href="api/v1/topology">topology</a>; also <a href="api/v1/switches">switches</a>,
  <a href="metrics">metrics</a>.</footer>
<script>
"use strict";
)html";

// After every part: the script's functions and state are all declared.
constexpr std::string_view kTail = R"html(
document.getElementById("all-rnics-box").addEventListener("toggle", renderAllRnics);
refresh();
setInterval(refresh, PERIOD_MS);
</script>
</body>
</html>
)html";

}  // namespace

std::string_view DashboardHtml() {
  static const std::string page = std::string(kHead) + std::string(DashboardCoreScript()) +
                                  std::string(DashboardPictureScript()) + std::string(kTail);
  return page;
}

}  // namespace hostmesh::analyzer::api
