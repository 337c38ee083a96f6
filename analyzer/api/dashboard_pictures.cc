#include "analyzer/api/dashboard_parts.h"

namespace hostmesh::analyzer::api {
namespace {

// The fabric picture: one grid per pair of tiers (rail switches by spines;
// rail by aggregation and aggregation by spine in three tiers), a cell per
// link coloured by the latest window's verdict, and the RNICs as rails by
// hosts. The timeline: open and recently resolved incidents as bars over the
// last hour (less while the analyzer is younger), above a strip of the judged
// windows from the stored history.
// Cells carry data-link / data-rnic and the class of their verdict, so a
// test (and a person) can find the faulty one.
constexpr std::string_view kScript = R"js(
const HOSTS_PER_BAND = 48;
let topo = null, topoVersion = -1, topoMissing = false;

// An inventory does not change while the analyzer runs; a fabric learned from
// traceroutes grows, and the status says when (topology_version): fetched
// again then. 404: nothing learned yet (links are not drawn).
async function loadTopology(st) {
  if ((topo || topoMissing) && st.topology_version === topoVersion) return;
  try {
    topo = await getJson("api/v1/topology");
    topoMissing = false;
  } catch (e) {
    if (e.status !== 404) throw e;
    topo = null;
    topoMissing = true;
  }
  topoVersion = st.topology_version;
}

function cellClass(name, marks) {
  if (marks.culprit.has(name)) return "culprit";
  if (marks.hotspot.has(name)) return "hotspot";
  if (marks.blind.has(name)) return "blind";
  return "";
}

function cellTitle(name, marks) {
  const l = marks.culprit.get(name) || marks.hotspot.get(name);
  if (l) return name + ": " + (marks.culprit.has(name) ? "loss " : "slow ") + pct(l.loss) +
                " (" + l.failures + " of " + (l.failures + l.good) + " probes), rank " + l.rank;
  return name + (marks.blind.has(name) ? ": not crossed by a traced probe" : ": fine");
}

// rows, cols: header names; cell(r, c) -> [class, title, data attrs] or null
function grid(title, rows, cols, cell, suspects) {
  const box = el("div", "picture");
  box.appendChild(el("h3", "", title));
  const g = el("div", "grid");
  g.style.gridTemplateColumns = "max-content repeat(" + cols.length + ", 14px)";
  g.appendChild(el("div"));
  for (const c of cols) g.appendChild(el("div", "hdr col" + (suspects.has(c) ? " suspect" : ""), c));
  for (const r of rows) {
    g.appendChild(el("div", "hdr" + (suspects.has(r) ? " suspect" : ""), r));
    for (const c of cols) {
      const spec = cell(r, c), e = el("div", "cell");
      if (!spec) { e.classList.add("absent"); g.appendChild(e); continue; }
      const [cls, tip, data] = spec;
      if (cls) e.classList.add(cls);
      e.title = tip;
      for (const k in data) e.dataset[k] = data[k];
      g.appendChild(e);
    }
  }
  box.appendChild(g);
  return box;
}

function byName(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

function renderFabric(d) {
  const box = document.getElementById("fabric");
  box.replaceChildren();
  const marks = { culprit: new Map(d.links.links.map(l => [l.name, l])),
                  hotspot: new Map(d.hotspots.links.map(l => [l.name, l])),
                  blind: new Set(d.coverage.never_crossed.map(l => l.name)) };
  const suspects = new Set(d.incidents.open.filter(i => i.kind === "switch")
                                           .map(i => i.suspect.name));
  let fabricLinks = 0;
  if (topo) {
    // One grid per (lower tier, upper tier): rows the lower switches.
    const tiers = new Map(topo.devices.map(x => [x.name, x.tier]));
    const groups = new Map();
    for (const l of topo.links) {
      if (l.kind !== "fabric" || !l.ends) continue;
      const [lo, up] = l.ends.map(e => e.device);
      const key = tiers.get(lo) + "|" + tiers.get(up);
      if (!groups.has(key)) groups.set(key, { rows: new Set(), cols: new Set(), links: new Map() });
      const g = groups.get(key);
      g.rows.add(lo); g.cols.add(up); g.links.set(lo + "|" + up, l.name);
      ++fabricLinks;
    }
    for (const [key, g] of groups) {
      const [lo, up] = key.split("|");
      box.appendChild(grid(lo + " switches \u00d7 " + up + "s (" + g.links.size + " links)",
        [...g.rows].sort(byName), [...g.cols].sort(byName), (r, c) => {
          const name = g.links.get(r + "|" + c);
          return name ? [cellClass(name, marks), cellTitle(name, marks), { link: name }] : null;
        }, suspects));
    }
  }
  // RNICs: rails by hosts, in bands; a cell is the RNIC and its link to the rail switch.
  const rnics = new Map(d.rnics.rnics.map(r => [r.host + "|" + r.rail, r]));
  const nicLink = new Map();
  for (const l of topo ? topo.links : []) {
    if (l.kind === "nic" && l.ends) nicLink.set(l.ends[0].device + "|" + l.ends[0].port, l.name);
  }
  const hosts = [...new Set(d.rnics.rnics.map(r => r.host))].sort(byName);
  const rails = [...new Set(d.rnics.rnics.map(r => r.rail))].sort((a, b) => a - b);
  for (let i = 0; i < hosts.length; i += HOSTS_PER_BAND) {
    const band = hosts.slice(i, i + HOSTS_PER_BAND);
    const title = "RNICs: rails \u00d7 hosts" + (hosts.length > HOSTS_PER_BAND
        ? " " + band[0] + "\u2013" + band[band.length - 1] : "");
    box.appendChild(grid(title, rails.map(r => "rail " + r), band, (railText, host) => {
      const r = rnics.get(host + "|" + railText.slice(5));
      if (!r) return null;
      const link = nicLink.get(r.host + "|" + r.nic_name);
      let cls = r.state === "down" ? "down" : r.state === "lossy" ? "lossy" : "";
      if (!cls && link) cls = cellClass(link, marks);
      const tip = r.host + " " + r.nic_name + " (" + r.ip + "): " + r.state + ", " +
                  r.timeouts + " of " + r.probes + " probes timed out" +
                  (link && cls && r.state === "ok" ? "; " + cellTitle(link, marks) : "");
      return [cls, tip, { rnic: r.host + "." + r.nic_name }];
    }, new Set()));
  }
  if (!box.childElementCount) box.appendChild(el("div", "empty", "no RNICs judged yet"));
  count("n-fabric", "(" + (topo ? fabricLinks + " fabric links, " : topoMissing
        ? "no fabric learned yet: links are not drawn; " : "") + d.rnics.rnics.length + " RNICs)");
}

function windowClass(w) {
  if (w.culprit_links.length || w.anomalous_rnics.length) return "bad";
  if (w.latency_hotspots.length || w.cluster.network_drop_rate > 0) return "warn";
  return "ok";
}

function renderTimeline(d) {
  const box = document.getElementById("timeline");
  box.replaceChildren();
  const now = analyzerNow(d.status), hourAgo = now - 3600e9;
  const wins = d.history.windows;
  const shown = d.incidents.open.concat(d.incidents.resolved)
      .filter(i => i.open || i.resolved_ns >= hourAgo)
      .sort((a, b) => a.first_seen_ns - b.first_seen_ns);
  // The last hour, or less while there is less to show (at least 5 minutes).
  const starts = wins.map(w => w.start_ns).concat(shown.map(i => i.first_seen_ns));
  const from = Math.max(hourAgo, Math.min(now - 300e9, ...starts));
  const x = ns => Math.max(0, Math.min(100, (ns - from) / (now - from) * 100));
  const span = (e, a, b) => { e.style.left = x(a) + "%"; e.style.width = (x(b) - x(a)) + "%"; };
  const row = (label, tip) => {
    const r = el("div", "tl-row"), l = el("div", "tl-label", label), t = el("div", "tl-track");
    l.title = tip;
    r.appendChild(l); r.appendChild(t); box.appendChild(r);
    return t;
  };
  const strip = row("windows judged (" + wins.length + ")",
                    "red: a link or RNIC blamed; amber: latency hotspot or network drops");
  for (const w of wins) {
    const e = el("div", "tl-win " + windowClass(w));
    span(e, w.start_ns, w.end_ns);
    e.title = clock(w.start_ns) + ": network drops " + pct(w.cluster.network_drop_rate) +
              ", RNIC drops " + pct(w.cluster.rnic_drop_rate) +
              (w.culprit_links.length ? ", blamed " + w.culprit_links.map(l => l.name).join(" ")
                                      : "") + ", " + w.agents_present + " agents";
    strip.appendChild(e);
  }
  for (const i of shown) {
    const label = i.kind + " " + suspectText(i.suspect);
    const track = row(label, label);
    const bar = el("div", "tl-bar " + (i.open ? "open" : "resolved"));
    bar.dataset.incident = String(i.id);
    span(bar, i.first_seen_ns, i.open ? now : (i.resolved_ns || i.last_seen_ns));
    bar.title = label + ": " + clock(i.first_seen_ns) + " \u2013 " +
                (i.open ? "open" : "resolved " + clock(i.resolved_ns)) + ", " + i.windows +
                " windows";
    track.appendChild(bar);
  }
  const axis = el("div", "tl-axis");
  for (const t of [from, (from + now) / 2, now]) axis.appendChild(el("span", "", clock(t)));
  box.appendChild(axis);
  count("n-timeline", "(" + shown.length + " incidents" + (d.history.truncated
        ? ", history truncated" : "") + ")");
}
)js";

}  // namespace

std::string_view DashboardPictureScript() {
  return kScript;
}

}  // namespace hostmesh::analyzer::api
