#include "analyzer/api/dashboard_parts.h"

namespace hostmesh::analyzer::api {
namespace {

// Polling, the cards and the tables. The fabric picture and the timeline
// (dashboard_pictures.cc) are called from render().
constexpr std::string_view kScript = R"js(
const PATHS = { status: "api/v1/status", rnics: "api/v1/rnics",
                links: "api/v1/links?suspicious", hotspots: "api/v1/links?kind=latency&suspicious",
                incidents: "api/v1/incidents", sla: "api/v1/sla", coverage: "api/v1/coverage" };
// An analyzer without a store answers 404 here: the timeline then has no windows.
const HISTORY = "api/v1/sla/history", NO_HISTORY = { windows: [], truncated: false };
let lastOk = null, lastData = null;

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

// The incident's own page (its evidence): ids are numbers from the API.
function incidentLink(id) {
  const a = el("a", "", "#" + id);
  a.href = "incidents/" + Number(id);
  return a;
}


// The analyzer's clock (ns): the browser's may be off.
function analyzerNow(st) {
  return st.window && st.window_lag_seconds !== null
      ? st.window.end_ns + st.window_lag_seconds * 1e9 : Date.now() * 1e6;
}

// The RNIC's counters that moved over the judged window, "none moved", or
// "-" when its agent sent no telemetry for it.
function counterDeltas(r) {
  const c = r.telemetry && r.telemetry.counters;
  if (!c) return "-";
  const moved = Object.entries(c).filter(([, d]) => d > 0).map(([k, d]) => k + " +" + d);
  return moved.length ? moved.join(", ") : "none moved";
}

const rnicCols = [
  ["host", r => r.host], ["nic", r => r.nic_name || String(r.nic)], ["ip", r => r.ip],
  ["rail", r => r.rail, "num"],
  ["state", r => tag(r.state === "ok" ? "ok" : r.state === "down" ? "bad" : "warn", r.state)],
  ["paper rule", r => r.paper_anomalous ? tag("warn", "anomalous") : "ok"],
  ["loss", r => pct(r.loss), "num"],
  ["timeouts / probes", r => r.timeouts + " / " + r.probes, "num"],
  ["sticky until", r => r.anomalous_until_ns ? clock(r.anomalous_until_ns) : "-"],
  ["counters (window)", r => counterDeltas(r), "wrap"]];
const rnicClass = r => r.state === "down" ? "bad" : r.state === "lossy" ? "warn" : "";

// Every RNIC: drawn only while the box is open (thousands of rows otherwise).
function renderAllRnics() {
  const all = lastData ? lastData.rnics.rnics : [];
  count("all-rnics-summary", "every RNIC (" + all.length + ")");
  if (!document.getElementById("all-rnics-box").open) return;
  const sorted = all.slice().sort((a, b) => a.host < b.host ? -1 : a.host > b.host ? 1
                                                                : a.nic - b.nic);
  table("all-rnics", sorted, rnicCols, "no RNICs judged yet", rnicClass);
}

function render(d) {
  const st = d.status, cards = document.getElementById("cards");
  const cl = d.sla.cluster, cov = d.coverage;
  cards.replaceChildren(
    card("open incidents", st.open_incidents, st.open_incidents > 0),
    card("agents present / known", st.agents_present + " / " + st.agents_known,
         st.agents_present < st.agents_known),
    card("hosts shedding load", st.hosts_shedding.length
         ? st.hosts_shedding.map(h => h.host + " at " + h.rate_fraction + " (" + h.cause + ")")
             .join(", ") : "none", st.hosts_shedding.length > 0),
    card("window lag", secs(st.window_lag_seconds),
         st.window_lag_seconds !== null &&
         st.window_lag_seconds > 2 * (st.window_seconds + st.grace_seconds)),
    card("RNIC drop rate", cl ? pct(cl.rnic_drop_rate) : "-", cl && cl.rnic_drop_rate > 0),
    card("network drop rate", cl ? pct(cl.network_drop_rate) : "-",
         cl && cl.network_drop_rate > 0),
    card("latency p99", cl ? fmtNs(cl.latency_ns.p99) : "-"),
    card("processing p99", cl ? fmtNs(cl.processing_ns.p99) : "-"),
    card("links covered", cov.links_total ? cov.crossed_count + " / " + cov.links_total : "-",
         cov.never_crossed_count > 0),
    card("window", st.window ? clock(st.window.start_ns) + " + " + st.window_seconds + " s"
                             : "none judged yet"),
    card("version", st.version + (st.inventory_loaded ? "" : " (fabric learned from traces)")));

  renderFabric(d);
  const open = d.incidents.open;
  count("n-incidents", "(" + open.length + " open, " + d.incidents.resolved.length +
        " recently resolved)");
  table("incidents", open, [
    ["id", i => incidentLink(i.id)],
    ["kind", i => tag(i.kind.startsWith("rnic") ? "bad" : "warn", i.kind)],
    ["suspect", i => suspectText(i.suspect), "wrap"],
    ["confidence", i => i.confidence.toFixed(2), "num"],
    ["since", i => clock(i.first_seen_ns) + " (" +
                   ago(i.first_seen_ns) + ")"],
    ["last seen", i => clock(i.last_seen_ns)],
    ["windows", i => i.windows, "num"],
    ["diagnosis", i => diagnosisText(i), "wrap"],
    ["evidence", i => evidenceText(i), "wrap"],
  ], "no open incidents", () => "");
  renderTimeline(d);

  const all = d.rnics.rnics;
  const bad = all.filter(r => r.state !== "ok" || r.paper_anomalous);
  const ours = bad.filter(r => r.state !== "ok").length;
  count("n-rnics", "(" + ours + " anomalous, " + (bad.length - ours) +
        " only by the paper's timeout rule; " + all.length + " RNICs judged)");
  table("rnics", bad, rnicCols,
        all.length ? "all " + all.length + " RNICs ok" : "no RNICs judged yet", rnicClass);
  renderAllRnics();

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

async function refresh() {
  const main = document.getElementById("main"), badge = document.getElementById("badge");
  try {
    const keys = Object.keys(PATHS);
    const history = getJson(HISTORY).catch(e => e.status ? NO_HISTORY : Promise.reject(e));
    const values = await Promise.all(keys.map(k => getJson(PATHS[k])).concat([history]));
    const d = { history: values[keys.length] };
    keys.forEach((k, i) => { d[k] = values[i]; });
    await loadTopology(d.status);
    lastData = d;
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
)js";

}  // namespace

std::string_view DashboardCoreScript() {
  return kScript;
}

}  // namespace hostmesh::analyzer::api
