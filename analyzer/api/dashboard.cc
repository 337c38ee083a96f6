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
)html";

// After the style.
constexpr std::string_view kBody = R"html(</style>
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
  static const std::string page = std::string(kHead) + std::string(DashboardStyle()) +
                                  std::string(kBody) + std::string(DashboardHelperScript()) +
                                  std::string(DashboardCoreScript()) +
                                  std::string(DashboardPictureScript()) + std::string(kTail);
  return page;
}

}  // namespace hostmesh::analyzer::api
