#include "analyzer/api/render.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "analyzer/api/json_writer.h"
#include "analyzer/api/render_fields.h"

namespace hostmesh::analyzer::api {

void WriteQuantiles(JsonWriter& w, std::string_view key, const analysis::Quantiles& q) {
  w.Key(key).BeginObject().Key("count").Uint(q.count).Key("p50").Double(q.p50);
  w.Key("p90").Double(q.p90).Key("p99").Double(q.p99).Key("p999").Double(q.p999).EndObject();
}

void WriteSlaFields(JsonWriter& w, const analysis::SlaRow& row) {
  w.Key("probes").Uint(row.probes).Key("timeouts").Uint(row.timeouts);
  w.Key("rnic_drops").Uint(row.rnic_drops).Key("network_drops").Uint(row.network_drops);
  w.Key("rnic_drop_rate").Double(row.rnic_drop_rate);
  w.Key("network_drop_rate").Double(row.network_drop_rate);
  WriteQuantiles(w, "latency_ns", row.latency);
  WriteQuantiles(w, "processing_ns", row.processing);
}

void WriteLinkName(JsonWriter& w, const ApiSnapshot& s, analysis::LinkId link) {
  w.BeginObject().Key("link").Uint(link).Key("name");
  w.String(link < s.links().size() ? s.links()[link].name : "link " + std::to_string(link));
  w.EndObject();
}

namespace {

using analysis::WindowReport;

const HostInfo* HostOf(const ApiSnapshot& s, analysis::HostId host) {
  return host < s.hosts().size() ? &s.hosts()[host] : nullptr;
}

const NicInfo* NicOf(const ApiSnapshot& s, analysis::HostId host, analysis::NicId nic) {
  const HostInfo* h = HostOf(s, host);
  return h != nullptr && nic < h->nics.size() ? &h->nics[nic] : nullptr;
}

// Host name, or its dense id in text when the snapshot does not know it (it
// always should; a name-less entry must not break the API).
std::string HostName(const ApiSnapshot& s, analysis::HostId host) {
  const HostInfo* h = HostOf(s, host);
  return h != nullptr ? h->host : "host-" + std::to_string(host);
}

void WriteWindow(JsonWriter& w, const WindowReport* report) {
  w.Key("window");
  if (report == nullptr) {
    w.Null();
    return;
  }
  w.BeginObject().Key("start_ns").Int(report->start_ns).Key("end_ns").Int(report->end_ns);
  w.Key("results").Uint(report->results).EndObject();
}

void WriteRnicRef(JsonWriter& w, const ApiSnapshot& s, analysis::HostId host, analysis::NicId nic) {
  w.Key("host").String(HostName(s, host)).Key("nic").Uint(nic);
  const NicInfo* info = NicOf(s, host, nic);
  w.Key("nic_name").String(info != nullptr ? info->name : "");
  w.Key("ip").String(info != nullptr ? info->ip : "");
  w.Key("rail").Int(info != nullptr ? info->rail : -1);
}

void WriteLinkEnd(JsonWriter& w, const LinkEnd& end) {
  w.BeginObject().Key("ip").String(end.ip).Key("device").String(end.device);
  w.Key("port").String(end.port).EndObject();
}

void WriteLinkRef(JsonWriter& w, const ApiSnapshot& s, analysis::LinkId link) {
  w.Key("link").Uint(link);
  if (link < s.links().size()) {
    const LinkInfo& info = s.links()[link];
    w.Key("name").String(info.name).Key("ends").BeginArray();
    WriteLinkEnd(w, info.lower);
    WriteLinkEnd(w, info.upper);
    w.EndArray();
  } else {
    w.Key("name").String("link " + std::to_string(link)).Key("ends").Null();
  }
}

// Compact form for long lists: id and name only.

void WriteSwitchRef(JsonWriter& w, const ApiSnapshot& s, analysis::SwitchId id) {
  w.Key("switch").Uint(id);
  if (id < s.devices().size()) {
    const DeviceInfo& d = s.devices()[id];
    w.Key("name").String(d.name).Key("tier").String(d.tier);
    w.Key("pod").Int(d.pod).Key("rail").Int(d.rail);
  } else {
    w.Key("name").String("switch " + std::to_string(id)).Key("tier").String("");
    w.Key("pod").Int(-1).Key("rail").Int(-1);
  }
}

bool Touches(const ApiSnapshot& s, analysis::LinkId link, analysis::SwitchId id) {
  if (link >= s.links().size()) return false;
  return s.links()[link].lower.device_id == id || s.links()[link].upper.device_id == id;
}

std::string Percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", ratio * 100);
  return buf;
}

std::string Duration(double ns) {
  char buf[32];
  if (ns >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f ms", ns / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f us", ns / 1e3);
  }
  return buf;
}

std::string RnicName(const ApiSnapshot& s, analysis::HostId host, analysis::NicId nic) {
  const NicInfo* info = NicOf(s, host, nic);
  std::string name =
      "RNIC " + HostName(s, host) + " " +
      (info != nullptr && !info->name.empty() ? info->name : "nic" + std::to_string(nic));
  if (info != nullptr && !info->ip.empty()) {
    name += " (" + info->ip + ", rail " + std::to_string(info->rail) + ")";
  }
  return name;
}

std::string LinkName(const ApiSnapshot& s, analysis::LinkId link) {
  return "link " + (link < s.links().size() ? s.links()[link].name : std::to_string(link));
}

// One line for on call, with the names the snapshot knows (the stored
// summary has only the analysis's ids).
std::string IncidentSummary(const ApiSnapshot& s, const analysis::Incident& inc) {
  using analysis::IncidentKind;
  const analysis::IncidentEvidence& e = inc.evidence;
  const analysis::Component& c = inc.suspect;
  switch (inc.kind) {
    case IncidentKind::kRnicDown:
      return RnicName(s, c.host, c.nic) + " down";
    case IncidentKind::kRnicLossy:
      return RnicName(s, c.host, c.nic) + " losing " + Percent(e.loss) + " of its probes";
    case IncidentKind::kLinkLoss:
      return LinkName(s, c.link) + " losing " + Percent(e.loss) + " of the probes through it";
    case IncidentKind::kSwitch: {
      const std::string name =
          c.link < s.devices().size() ? s.devices()[c.link].name : std::to_string(c.link);
      return "switch " + name + ": " + std::to_string(e.links.size()) + " of its links blamed";
    }
    case IncidentKind::kLatencyHotspot:
      return "latency hotspot on " + (c.kind == analysis::Component::Kind::kRnic
                                          ? RnicName(s, c.host, c.nic)
                                          : LinkName(s, c.link));
    case IncidentKind::kHostProcessing:
      return "host " + HostName(s, c.host) + " processing delay p90 " +
             Duration(e.processing_p90_ns) + " (fleet median " + Duration(e.fleet_median_p90_ns) +
             ")";
  }
  return inc.summary;
}

void WriteIncident(JsonWriter& w, const ApiSnapshot& s, const analysis::Incident& inc) {
  using analysis::IncidentKind;
  w.BeginObject().Key("id").Uint(inc.id).Key("kind").String(analysis::IncidentKindName(inc.kind));
  w.Key("summary").String(IncidentSummary(s, inc)).Key("suspect").BeginObject();
  switch (inc.kind) {
    case IncidentKind::kRnicDown:
    case IncidentKind::kRnicLossy:
      WriteRnicRef(w, s, inc.suspect.host, inc.suspect.nic);
      break;
    case IncidentKind::kHostProcessing:
      w.Key("host").String(HostName(s, inc.suspect.host));
      break;
    case IncidentKind::kSwitch:
      WriteSwitchRef(w, s, inc.suspect.link);
      break;
    case IncidentKind::kLinkLoss:
    case IncidentKind::kLatencyHotspot:
      if (inc.suspect.kind == analysis::Component::Kind::kRnic) {
        WriteRnicRef(w, s, inc.suspect.host, inc.suspect.nic);
      } else {
        WriteLinkRef(w, s, inc.suspect.link);
      }
      break;
  }
  w.EndObject();
  const analysis::IncidentEvidence& e = inc.evidence;
  w.Key("confidence").Double(inc.confidence).Key("open").Bool(inc.open);
  w.Key("first_seen_ns").Int(e.first_seen_ns).Key("last_seen_ns").Int(e.last_seen_ns);
  w.Key("resolved_ns").Int(inc.resolved_ns).Key("windows").Int(e.windows);
  w.Key("evidence").BeginObject().Key("failures").Uint(e.failures).Key("good").Uint(e.good);
  w.Key("votes").Uint(e.votes).Key("loss").Double(e.loss);
  w.Key("processing_p90_ns").Double(e.processing_p90_ns);
  w.Key("fleet_median_p90_ns").Double(e.fleet_median_p90_ns);
  w.Key("example_paths").BeginArray();
  for (const auto& path : e.example_paths) {
    w.BeginArray();
    for (const analysis::LinkId link : path) w.Uint(link);
    w.EndArray();
  }
  // A switch's blamed links.
  w.EndArray().Key("links").BeginArray();
  for (const analysis::LinkId link : e.links) WriteLinkName(w, s, link);
  w.EndArray().EndObject().EndObject();
}

}  // namespace

std::string_view RnicStateName(analysis::RnicState state) {
  switch (state) {
    case analysis::RnicState::kOk:
      return "ok";
    case analysis::RnicState::kLossy:
      return "lossy";
    case analysis::RnicState::kDown:
      return "down";
  }
  return "unknown";
}

std::string RenderStatus(const ApiSnapshot& s, std::int64_t now_ns) {
  JsonWriter w;
  const WindowReport* report = s.report.get();
  w.BeginObject().Key("version").String(s.version);
  w.Key("uptime_seconds").Double(static_cast<double>(now_ns - s.started_ns) / 1e9);
  w.Key("window_seconds").Double(static_cast<double>(s.window_ns) / 1e9);
  w.Key("grace_seconds").Double(static_cast<double>(s.grace_ns) / 1e9);
  w.Key("inventory_loaded").Bool(s.inventory_loaded);
  w.Key("agents_known").Uint(s.hosts().size());
  w.Key("agents_present").Uint(report != nullptr ? report->present_hosts.size() : 0);
  WriteWindow(w, report);
  // How far the judged state trails now: window + grace when all is well.
  w.Key("window_lag_seconds");
  if (report != nullptr) {
    w.Double(static_cast<double>(now_ns - report->end_ns) / 1e9);
  } else {
    w.Null();
  }
  std::size_t open = 0;
  for (const auto& inc : s.incidents) open += inc.open ? 1 : 0;
  w.Key("open_incidents").Uint(open).EndObject();
  return w.Take();
}

std::string RenderRnics(const ApiSnapshot& s) {
  JsonWriter w;
  const WindowReport* report = s.report.get();
  w.BeginObject();
  WriteWindow(w, report);
  w.Key("rnics").BeginArray();
  if (report != nullptr) {
    for (const analysis::RnicStatus& r : report->rnics) {
      w.BeginObject();
      WriteRnicRef(w, s, r.host, r.nic);
      w.Key("state").String(RnicStateName(r.state)).Key("anomalous").Bool(r.anomalous);
      w.Key("paper_anomalous").Bool(r.paper_anomalous);
      w.Key("anomalous_until_ns").Int(r.anomalous_until_ns).Key("loss").Double(r.loss);
      w.Key("probes").Uint(r.probes).Key("timeouts").Uint(r.timeouts);
      w.Key("probes_to").Uint(r.probes_to).Key("timeouts_to").Uint(r.timeouts_to);
      w.EndObject();
    }
  }
  w.EndArray().EndObject();
  return w.Take();
}

std::string RenderLinks(const ApiSnapshot& s, bool suspicious_only, LinkRanking ranking) {
  JsonWriter w;
  const WindowReport* report = s.report.get();
  const bool latency = ranking == LinkRanking::kLatency;
  w.BeginObject();
  WriteWindow(w, report);
  w.Key("kind").String(latency ? "latency" : "loss");
  if (latency) {
    w.Key("method").String(
        "greedy inference over slow probes (latency above slow_threshold_ns); "
        "votes: paper Algorithm 1 over slow probes");
    w.Key("slow_threshold_ns").Int(report != nullptr ? report->slow_threshold_ns : 0);
  } else {
    w.Key("method").String("greedy loss-weighted inference; votes: paper Algorithm 1");
  }
  // For latency, "failures" are slow probes through the link and "loss" their share.
  w.Key("links").BeginArray();
  if (report != nullptr) {
    const analysis::Localization& loc = latency ? report->latency : report->loss;
    std::unordered_map<analysis::LinkId, std::uint64_t> votes;
    for (const analysis::LinkRank& b : loc.baseline) votes[b.link] = b.votes;
    std::uint64_t rank = 0;
    for (const analysis::LinkRank& l : loc.links) {
      ++rank;
      if (suspicious_only && !l.culprit) continue;
      w.BeginObject().Key("rank").Uint(rank);
      WriteLinkRef(w, s, l.link);
      const auto it = votes.find(l.link);
      w.Key("culprit").Bool(l.culprit).Key("loss").Double(l.loss).Key("score").Double(l.score);
      w.Key("failures").Uint(l.failures).Key("good").Uint(l.good);
      w.Key("votes").Uint(it != votes.end() ? it->second : l.votes).EndObject();
    }
  }
  w.EndArray().EndObject();
  return w.Take();
}

std::string RenderSwitches(const ApiSnapshot& s, bool suspicious_only) {
  JsonWriter w;
  const WindowReport* report = s.report.get();
  w.BeginObject();
  WriteWindow(w, report);
  w.Key("method").String(
      "links blamed by the greedy loss-weighted inference per switch (two or more: the switch "
      "is the suspect); votes: paper Algorithm 1");
  w.Key("switches").BeginArray();
  if (report != nullptr) {
    const analysis::Localization& loc = report->loss;
    // Paper rank: by votes alone, ties by id (switches without votes have none).
    std::vector<const analysis::SwitchRank*> by_votes;
    for (const analysis::SwitchRank& r : loc.switches) {
      if (r.votes > 0) by_votes.push_back(&r);
    }
    std::sort(by_votes.begin(), by_votes.end(), [](const auto* a, const auto* b) {
      return a->votes != b->votes ? a->votes > b->votes : a->id < b->id;
    });
    std::uint64_t rank = 0;
    for (const analysis::SwitchRank& r : loc.switches) {
      ++rank;
      const bool culprit = std::find(loc.culprit_switches.begin(), loc.culprit_switches.end(),
                                     r.id) != loc.culprit_switches.end();
      if (suspicious_only && !culprit) continue;
      w.BeginObject().Key("rank").Uint(rank);
      WriteSwitchRef(w, s, r.id);
      w.Key("culprit").Bool(culprit).Key("culprit_links").Uint(r.culprit_links);
      w.Key("votes").Uint(r.votes).Key("paper_rank");
      const auto at = std::find(by_votes.begin(), by_votes.end(), &r);
      if (at != by_votes.end()) {
        w.Uint(static_cast<std::uint64_t>(at - by_votes.begin()) + 1);
      } else {
        w.Null();
      }
      // Evidence: its links the better method blamed.
      w.Key("links").BeginArray();
      for (const analysis::LinkRank& l : loc.links) {
        if (!l.culprit || !Touches(s, l.link, r.id)) continue;
        w.BeginObject();
        WriteLinkRef(w, s, l.link);
        w.Key("loss").Double(l.loss).Key("failures").Uint(l.failures).Key("good").Uint(l.good);
        w.Key("votes").Uint(l.votes).EndObject();
      }
      w.EndArray().EndObject();
    }
  }
  w.EndArray().EndObject();
  return w.Take();
}

std::string RenderCoverage(const ApiSnapshot& s) {
  JsonWriter w;
  const WindowReport* report = s.report.get();
  w.BeginObject();
  WriteWindow(w, report);
  static const analysis::Coverage kEmpty;
  const analysis::Coverage& c = report != nullptr ? report->coverage : kEmpty;
  w.Key("links_total").Uint(c.crossed.size() + c.never_crossed.size());
  w.Key("crossed_count").Uint(c.crossed.size());
  w.Key("never_crossed_count").Uint(c.never_crossed.size());
  w.Key("fraction").Double(c.fraction);
  w.Key("traced_probes").Uint(c.traced_probes).Key("untraced_probes").Uint(c.untraced_probes);
  // The blind spots in full (usually few); the crossed links by id and name.
  w.Key("never_crossed").BeginArray();
  for (const analysis::LinkId link : c.never_crossed) {
    w.BeginObject();
    WriteLinkRef(w, s, link);
    w.EndObject();
  }
  w.EndArray().Key("crossed").BeginArray();
  for (const analysis::LinkId link : c.crossed) WriteLinkName(w, s, link);
  w.EndArray().EndObject();
  return w.Take();
}

std::string RenderTopology(const ApiSnapshot& s) {
  JsonWriter w;
  w.BeginObject().Key("device_count").Uint(s.devices().size());
  w.Key("link_count").Uint(s.links().size()).Key("devices").BeginArray();
  for (std::size_t id = 0; id < s.devices().size(); ++id) {
    const DeviceInfo& d = s.devices()[id];
    w.BeginObject().Key("id").Uint(id).Key("name").String(d.name).Key("tier").String(d.tier);
    w.Key("pod").Int(d.pod).Key("rail").Int(d.rail).EndObject();
  }
  w.EndArray().Key("links").BeginArray();
  for (std::size_t id = 0; id < s.links().size(); ++id) {
    w.BeginObject();
    WriteLinkRef(w, s, static_cast<analysis::LinkId>(id));
    w.Key("kind").String(s.links()[id].kind).EndObject();
  }
  w.EndArray().EndObject();
  return w.Take();
}

std::string RenderError(std::string_view message) {
  JsonWriter w;
  w.BeginObject().Key("error").String(message).EndObject();
  return w.Take();
}

std::string RenderIncidents(const ApiSnapshot& s) {
  JsonWriter w;
  w.BeginObject().Key("open").BeginArray();
  for (const auto& inc : s.incidents) {
    if (inc.open) WriteIncident(w, s, inc);
  }
  w.EndArray().Key("resolved").BeginArray();
  for (const auto& inc : s.incidents) {
    if (!inc.open) WriteIncident(w, s, inc);
  }
  w.EndArray().EndObject();
  return w.Take();
}

std::string RenderSla(const ApiSnapshot& s) {
  JsonWriter w;
  const WindowReport* report = s.report.get();
  w.BeginObject();
  WriteWindow(w, report);
  if (report == nullptr) {
    w.Key("cluster").Null().Key("rails").BeginArray().EndArray();
    w.Key("hosts").BeginArray().EndArray().EndObject();
    return w.Take();
  }
  w.Key("cluster").BeginObject();
  WriteSlaFields(w, report->sla.cluster);
  w.EndObject().Key("rails").BeginArray();
  for (const analysis::RailSla& r : report->sla.rails) {
    w.BeginObject().Key("rail").Int(r.rail);
    WriteSlaFields(w, r.sla);
    w.EndObject();
  }
  w.EndArray().Key("hosts").BeginArray();
  for (const analysis::HostSla& h : report->sla.hosts) {
    w.BeginObject().Key("host").String(HostName(s, h.host));
    WriteSlaFields(w, h.sla);
    w.EndObject();
  }
  w.EndArray().EndObject();
  return w.Take();
}

}  // namespace hostmesh::analyzer::api
