#include "analyzer/api/render.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analyzer/api/render_fields.h"

namespace hostmesh::analyzer::api {

Json QuantilesJson(const analysis::Quantiles& q) {
  Json j = Json::object();
  j["count"] = q.count;
  j["p50"] = JsonNumber(q.p50);
  j["p90"] = JsonNumber(q.p90);
  j["p99"] = JsonNumber(q.p99);
  j["p999"] = JsonNumber(q.p999);
  return j;
}

void AddSlaFields(Json& row, const analysis::SlaRow& sla) {
  row["probes"] = sla.probes;
  row["timeouts"] = sla.timeouts;
  row["rnic_drops"] = sla.rnic_drops;
  row["network_drops"] = sla.network_drops;
  row["rnic_drop_rate"] = JsonNumber(sla.rnic_drop_rate);
  row["network_drop_rate"] = JsonNumber(sla.network_drop_rate);
  row["latency_ns"] = QuantilesJson(sla.latency);
  row["processing_ns"] = QuantilesJson(sla.processing);
}

Json LinkNameJson(const ApiSnapshot& s, analysis::LinkId link) {
  Json j = Json::object();
  j["link"] = link;
  j["name"] = link < s.links().size() ? s.links()[link].name : "link " + std::to_string(link);
  return j;
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

}  // namespace

// Host name, or its dense id in text when the snapshot does not know it (it
// always should; a name-less entry must not break the API).
std::string HostName(const ApiSnapshot& s, analysis::HostId host) {
  const HostInfo* h = HostOf(s, host);
  return h != nullptr ? h->host : "host-" + std::to_string(host);
}

// "window": the judged window, null before the first.
void AddWindow(Json& j, const WindowReport* report) {
  if (report == nullptr) {
    j["window"] = nullptr;
    return;
  }
  Json& w = j["window"] = Json::object();
  w["start_ns"] = report->start_ns;
  w["end_ns"] = report->end_ns;
  w["results"] = report->results;
}

void AddRnicRef(Json& j, const ApiSnapshot& s, analysis::HostId host, analysis::NicId nic) {
  j["host"] = HostName(s, host);
  j["nic"] = nic;
  const NicInfo* info = NicOf(s, host, nic);
  j["nic_name"] = info != nullptr ? info->name : "";
  j["ip"] = info != nullptr ? info->ip : "";
  j["rail"] = info != nullptr ? info->rail : -1;
}

Json LinkEndJson(const LinkEnd& end) {
  Json j = Json::object();
  j["ip"] = end.ip;
  j["device"] = end.device;
  j["port"] = end.port;
  return j;
}

void AddLinkRef(Json& j, const ApiSnapshot& s, analysis::LinkId link) {
  j["link"] = link;
  if (link < s.links().size()) {
    const LinkInfo& info = s.links()[link];
    j["name"] = info.name;
    j["ends"] = Json::array({LinkEndJson(info.lower), LinkEndJson(info.upper)});
  } else {
    j["name"] = "link " + std::to_string(link);
    j["ends"] = nullptr;
  }
}

void AddSwitchRef(Json& j, const ApiSnapshot& s, analysis::SwitchId id) {
  j["switch"] = id;
  if (id < s.devices().size()) {
    const DeviceInfo& d = s.devices()[id];
    j["name"] = d.name;
    j["tier"] = d.tier;
    j["pod"] = d.pod;
    j["rail"] = d.rail;
  } else {
    j["name"] = "switch " + std::to_string(id);
    j["tier"] = "";
    j["pod"] = -1;
    j["rail"] = -1;
  }
}

namespace {

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

std::string DeviceName(const ApiSnapshot& s, std::uint32_t device) {
  return device < s.devices().size() ? s.devices()[device].name : std::to_string(device);
}

// "from p0r0 to s01" when the failing probes cross the link one way only.
std::string LinkWay(const ApiSnapshot& s, analysis::LinkId link, std::uint8_t directions) {
  if (link >= s.links().size() ||
      (directions != analysis::kUpward && directions != analysis::kDownward)) {
    return "";
  }
  const LinkInfo& l = s.links()[link];
  const bool up = directions == analysis::kUpward;
  return " from " + (up ? l.lower : l.upper).device + " to " + (up ? l.upper : l.lower).device;
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
    case IncidentKind::kLinkLoss: {
      if (e.routed_around) {
        return LinkName(s, c.link) + " down: routing avoids it (no new path crosses it)";
      }
      const std::string way = LinkWay(s, c.link, e.directions);
      return LinkName(s, c.link) + " losing " + Percent(e.loss) + " of the probes" +
             (way.empty() ? " through it" : way);
    }
    case IncidentKind::kSwitch:
      if (e.routed_around) {
        return "switch " + DeviceName(s, c.link) +
               " down: routing avoids it (no new path crosses any of its links)";
      }
      return "switch " + DeviceName(s, c.link) + " losing " + Percent(e.loss) +
             " of the probes through it";
    case IncidentKind::kFlapping: {
      const std::string what = c.kind == analysis::Component::Kind::kRnic
                                   ? RnicName(s, c.host, c.nic)
                                   : LinkName(s, c.link);
      std::string line = what + " flapping: " + std::to_string(e.flaps) + " down episodes";
      if (e.flap_period_s > 0) line += ", about every " + Duration(e.flap_period_s * 1e9);
      if (!e.churn_links.empty()) {
        line += "; its route churn also failed probes traced over";
        for (std::size_t i = 0; i < e.churn_links.size(); ++i) {
          line += (i == 0 ? " " : ", ") + LinkName(s, e.churn_links[i]);
        }
      }
      return line;
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

}  // namespace

Json IncidentJson(const ApiSnapshot& s, const analysis::Incident& inc) {
  using analysis::IncidentKind;
  Json j = Json::object();
  j["id"] = inc.id;
  j["kind"] = analysis::IncidentKindName(inc.kind);
  j["summary"] = IncidentSummary(s, inc);
  Json& suspect = j["suspect"] = Json::object();
  switch (inc.kind) {
    case IncidentKind::kRnicDown:
    case IncidentKind::kRnicLossy:
      AddRnicRef(suspect, s, inc.suspect.host, inc.suspect.nic);
      break;
    case IncidentKind::kHostProcessing:
      suspect["host"] = HostName(s, inc.suspect.host);
      break;
    case IncidentKind::kSwitch:
      AddSwitchRef(suspect, s, inc.suspect.link);
      break;
    case IncidentKind::kLinkLoss:
    case IncidentKind::kLatencyHotspot:
    case IncidentKind::kFlapping:
      if (inc.suspect.kind == analysis::Component::Kind::kRnic) {
        AddRnicRef(suspect, s, inc.suspect.host, inc.suspect.nic);
      } else {
        AddLinkRef(suspect, s, inc.suspect.link);
      }
      break;
  }
  const analysis::IncidentEvidence& e = inc.evidence;
  j["confidence"] = JsonNumber(inc.confidence);
  j["open"] = inc.open;
  j["first_seen_ns"] = e.first_seen_ns;
  j["last_seen_ns"] = e.last_seen_ns;
  j["resolved_ns"] = inc.resolved_ns;
  if (inc.merged_into != 0) j["merged_into"] = inc.merged_into;
  j["windows"] = e.windows;
  Json& evidence = j["evidence"] = Json::object();
  evidence["failures"] = e.failures;
  evidence["good"] = e.good;
  evidence["votes"] = e.votes;
  evidence["loss"] = JsonNumber(e.loss);
  evidence["processing_p90_ns"] = JsonNumber(e.processing_p90_ns);
  evidence["fleet_median_p90_ns"] = JsonNumber(e.fleet_median_p90_ns);
  if (inc.suspect.kind == analysis::Component::Kind::kLink && e.directions != 0) {
    evidence["direction"] =
        analysis::LinkDirectionName(e.directions == (analysis::kUpward | analysis::kDownward)
                                        ? std::uint8_t{analysis::kBothWays}
                                        : e.directions);
  }
  if (inc.kind == IncidentKind::kFlapping) {
    evidence["flaps"] = e.flaps;
    evidence["flap_period_s"] = JsonNumber(e.flap_period_s);
    Json& churn = evidence["churn_links"] = Json::array();
    for (const analysis::LinkId link : e.churn_links) churn.push_back(LinkNameJson(s, link));
  }
  Json& paths = evidence["example_paths"] = Json::array();
  for (const auto& path : e.example_paths) paths.push_back(path);
  // A switch's blamed links.
  Json& links = evidence["links"] = Json::array();
  for (const analysis::LinkId link : e.links) links.push_back(LinkNameJson(s, link));
  // The problem type named from probes and NIC counters (analyzer/diagnosis);
  // rule "" while no window was diagnosed yet.
  const analysis::IncidentDiagnosis& d = inc.diagnosis;
  Json& diagnosis = j["diagnosis"] = Json::object();
  diagnosis["type"] = d.type;
  diagnosis["rule"] = d.rule;
  diagnosis["evidence"] = d.evidence;
  Json& counters = diagnosis["counters"] = Json::object();
  for (const auto& [counter, delta] : d.counters) counters[counter] = delta;
  diagnosis["window_start_ns"] = d.window_start_ns;
  return j;
}

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

// The window's hosts whose agents shed load (self-protection): fewer probes
// by their choice, not loss or a coverage hole.
Json SheddingJson(const ApiSnapshot& s, const WindowReport* report) {
  Json out = Json::array();
  if (report == nullptr) return out;
  for (const analysis::SheddingHost& h : report->shedding) {
    Json& j = out.emplace_back(Json::object());
    j["host"] = HostName(s, h.host);
    j["rate_fraction"] = JsonNumber(h.rate_fraction);
    j["lowest_fraction"] = JsonNumber(h.lowest_fraction);
    j["since_ns"] = h.since_ns;
    j["cause"] = h.cause;
  }
  return out;
}

std::string RenderStatus(const ApiSnapshot& s, std::int64_t now_ns) {
  const WindowReport* report = s.report.get();
  Json j = Json::object();
  j["version"] = s.version;
  j["uptime_seconds"] = JsonNumber(static_cast<double>(now_ns - s.started_ns) / 1e9);
  j["window_seconds"] = JsonNumber(static_cast<double>(s.window_ns) / 1e9);
  j["grace_seconds"] = JsonNumber(static_cast<double>(s.grace_ns) / 1e9);
  j["inventory_loaded"] = s.inventory_loaded;
  j["topology_source"] = s.topology_source;
  j["topology_version"] = s.topology_version;
  j["agents_known"] = s.hosts().size();
  j["agents_present"] = report != nullptr ? report->present_hosts.size() : 0;
  j["hosts_shedding"] = SheddingJson(s, report);
  AddWindow(j, report);
  // How far the judged state trails now: window + grace when all is well.
  j["window_lag_seconds"] =
      report != nullptr ? JsonNumber(static_cast<double>(now_ns - report->end_ns) / 1e9) : nullptr;
  std::size_t open = 0;
  for (const auto& inc : s.incidents) open += inc.open ? 1 : 0;
  j["open_incidents"] = open;
  return DumpJson(j);
}

std::optional<TelemetryQuery> WindowTelemetryQuery(const ApiSnapshot& s) {
  if (s.report == nullptr) return std::nullopt;
  TelemetryQuery query;
  query.from_ns = s.report->start_ns;
  query.to_ns = s.report->end_ns;
  query.limit = std::numeric_limits<std::size_t>::max();
  return query;
}

std::string RenderRnics(const ApiSnapshot& s, const TelemetryAnswer* window_telemetry) {
  const WindowReport* report = s.report.get();
  Json j = Json::object();
  AddWindow(j, report);
  // The window's counter deltas by (agent, NIC name): "not collected" without
  // a telemetry source, the store's error when it failed.
  std::map<std::pair<std::string_view, std::string_view>, const telemetry::NicCounterTotals*>
      totals;
  if (window_telemetry == nullptr) {
    j["telemetry"] = "not collected";
  } else if (!window_telemetry->error.empty()) {
    j["telemetry"] = "store: " + window_telemetry->error;
  } else {
    j["telemetry"] = "window";
    for (const telemetry::NicTelemetryRow& row : window_telemetry->rows) {
      totals.emplace(std::pair<std::string_view, std::string_view>{row.agent_id, row.nic},
                     &row.totals);
    }
  }
  Json& rnics = j["rnics"] = Json::array();
  if (report != nullptr) {
    for (const analysis::RnicStatus& r : report->rnics) {
      Json& rnic = rnics.emplace_back(Json::object());
      AddRnicRef(rnic, s, r.host, r.nic);
      rnic["state"] = RnicStateName(r.state);
      rnic["anomalous"] = r.anomalous;
      rnic["paper_anomalous"] = r.paper_anomalous;
      rnic["anomalous_until_ns"] = r.anomalous_until_ns;
      rnic["loss"] = JsonNumber(r.loss);
      rnic["probes"] = r.probes;
      rnic["timeouts"] = r.timeouts;
      rnic["probes_to"] = r.probes_to;
      rnic["timeouts_to"] = r.timeouts_to;
      rnic["send_failures"] = r.send_failures;
      // Named as the agent's telemetry names it: "nic<id>" before its Hello.
      const NicInfo* info = NicOf(s, r.host, r.nic);
      const std::string nic_name =
          info != nullptr && !info->name.empty() ? info->name : "nic" + std::to_string(r.nic);
      const auto it = r.host < s.hosts().size()
                          ? totals.find({s.hosts()[r.host].agent_id, nic_name})
                          : totals.end();
      rnic["telemetry"] = it != totals.end() ? NicTotalsJson(*it->second) : Json(nullptr);
    }
  }
  return DumpJson(j);
}

std::string RenderLinks(const ApiSnapshot& s, bool suspicious_only, LinkRanking ranking) {
  const WindowReport* report = s.report.get();
  const bool latency = ranking == LinkRanking::kLatency;
  Json j = Json::object();
  AddWindow(j, report);
  j["kind"] = latency ? "latency" : "loss";
  if (latency) {
    j["method"] =
        "greedy inference over slow probes (latency above slow_threshold_ns); "
        "votes: paper Algorithm 1 over slow probes";
    j["slow_threshold_ns"] = report != nullptr ? report->slow_threshold_ns : 0;
  } else {
    j["method"] = "greedy loss-weighted inference; votes: paper Algorithm 1";
  }
  // For latency, "failures" are slow probes through the link and "loss" their share.
  Json& links = j["links"] = Json::array();
  if (report != nullptr) {
    const analysis::Localization& loc = latency ? report->latency : report->loss;
    std::unordered_map<analysis::LinkId, std::uint64_t> votes;
    for (const analysis::LinkRank& b : loc.baseline) votes[b.link] = b.votes;
    std::uint64_t rank = 0;
    for (const analysis::LinkRank& l : loc.links) {
      ++rank;
      if (suspicious_only && !l.culprit) continue;
      Json& link = links.emplace_back(Json::object());
      link["rank"] = rank;
      AddLinkRef(link, s, l.link);
      const auto it = votes.find(l.link);
      link["culprit"] = l.culprit;
      link["loss"] = JsonNumber(l.loss);
      link["score"] = JsonNumber(l.score);
      link["failures"] = l.failures;
      link["good"] = l.good;
      link["votes"] = it != votes.end() ? it->second : l.votes;
    }
  }
  return DumpJson(j);
}

std::string RenderSwitches(const ApiSnapshot& s, bool suspicious_only) {
  const WindowReport* report = s.report.get();
  Json j = Json::object();
  AddWindow(j, report);
  j["method"] =
      "links blamed by the greedy loss-weighted inference per switch (two or more: the switch "
      "is the suspect); votes: paper Algorithm 1";
  Json& switches = j["switches"] = Json::array();
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
      Json& sw = switches.emplace_back(Json::object());
      sw["rank"] = rank;
      AddSwitchRef(sw, s, r.id);
      sw["culprit"] = culprit;
      // Down: routing withdrew its up-links (its links are not named then).
      sw["routed_around"] = r.routed_around;
      sw["culprit_links"] = r.culprit_links;
      sw["votes"] = r.votes;
      const auto at = std::find(by_votes.begin(), by_votes.end(), &r);
      sw["paper_rank"] = at != by_votes.end()
                             ? Json(static_cast<std::uint64_t>(at - by_votes.begin()) + 1)
                             : Json(nullptr);
      // Evidence: its links the better method blamed.
      Json& links = sw["links"] = Json::array();
      for (const analysis::LinkRank& l : loc.links) {
        if (!l.culprit || !Touches(s, l.link, r.id)) continue;
        Json& link = links.emplace_back(Json::object());
        AddLinkRef(link, s, l.link);
        link["loss"] = JsonNumber(l.loss);
        link["failures"] = l.failures;
        link["good"] = l.good;
        link["votes"] = l.votes;
      }
    }
  }
  return DumpJson(j);
}

std::string RenderCoverage(const ApiSnapshot& s) {
  const WindowReport* report = s.report.get();
  Json j = Json::object();
  AddWindow(j, report);
  static const analysis::Coverage kEmpty;
  const analysis::Coverage& c = report != nullptr ? report->coverage : kEmpty;
  j["links_total"] = c.crossed.size() + c.never_crossed.size();
  j["crossed_count"] = c.crossed.size();
  j["never_crossed_count"] = c.never_crossed.size();
  j["fraction"] = JsonNumber(c.fraction);
  j["traced_probes"] = c.traced_probes;
  j["untraced_probes"] = c.untraced_probes;
  // Hosts probing at a fraction of their rate: what they did not probe is no hole.
  j["hosts_shedding"] = SheddingJson(s, report);
  // The blind spots in full (usually few); the crossed links by id and name.
  Json& never = j["never_crossed"] = Json::array();
  for (const analysis::LinkId link : c.never_crossed) {
    AddLinkRef(never.emplace_back(Json::object()), s, link);
  }
  Json& crossed = j["crossed"] = Json::array();
  for (const analysis::LinkId link : c.crossed) crossed.push_back(LinkNameJson(s, link));
  return DumpJson(j);
}

std::string RenderTopology(const ApiSnapshot& s) {
  Json j = Json::object();
  j["source"] = s.topology_source;
  j["version"] = s.topology_version;
  j["device_count"] = s.devices().size();
  j["link_count"] = s.links().size();
  Json& devices = j["devices"] = Json::array();
  for (std::size_t id = 0; id < s.devices().size(); ++id) {
    const DeviceInfo& d = s.devices()[id];
    Json& device = devices.emplace_back(Json::object());
    device["id"] = id;
    device["name"] = d.name;
    device["tier"] = d.tier;
    device["pod"] = d.pod;
    device["rail"] = d.rail;
  }
  Json& links = j["links"] = Json::array();
  for (std::size_t id = 0; id < s.links().size(); ++id) {
    Json& link = links.emplace_back(Json::object());
    AddLinkRef(link, s, static_cast<analysis::LinkId>(id));
    link["kind"] = s.links()[id].kind;
  }
  return DumpJson(j);
}

std::string RenderDisagreements(const ApiSnapshot& s) {
  Json j = Json::object();
  Json& traces = j["traces_by_kind"] = Json::object();
  for (const auto& [kind, n] : s.disagreeing_traces) traces[kind] = n;
  Json& places = j["disagreements"] = Json::array();
  for (const TopologyDisagreement& d : s.topology_disagreements()) {
    Json& place = places.emplace_back(Json::object());
    place["kind"] = d.kind;
    place["description"] = d.description;
    place["traces"] = d.traces;
    place["agreeing_traces"] = d.agreeing_traces;
    place["first_seen_ns"] = d.first_seen_ns;
    place["last_seen_ns"] = d.last_seen_ns;
    Json& example = place["last_trace"] = Json::object();
    example["agent_id"] = d.agent_id;
    example["src_ip"] = d.src_ip;
    example["dst_ip"] = d.dst_ip;
    example["src_port"] = d.src_port;
  }
  return DumpJson(j);
}

std::string RenderError(std::string_view message) {
  Json j = Json::object();
  j["error"] = message;
  return DumpJson(j);
}

std::string RenderIncidents(const ApiSnapshot& s) {
  Json j = Json::object();
  Json& open = j["open"] = Json::array();
  for (const auto& inc : s.incidents) {
    if (inc.open) open.push_back(IncidentJson(s, inc));
  }
  Json& resolved = j["resolved"] = Json::array();
  for (const auto& inc : s.incidents) {
    if (!inc.open) resolved.push_back(IncidentJson(s, inc));
  }
  return DumpJson(j);
}

std::string RenderSla(const ApiSnapshot& s) {
  const WindowReport* report = s.report.get();
  Json j = Json::object();
  AddWindow(j, report);
  if (report == nullptr) {
    j["cluster"] = nullptr;
    j["rails"] = Json::array();
    j["hosts"] = Json::array();
    return DumpJson(j);
  }
  AddSlaFields(j["cluster"] = Json::object(), report->sla.cluster);
  Json& rails = j["rails"] = Json::array();
  for (const analysis::RailSla& r : report->sla.rails) {
    Json& rail = rails.emplace_back(Json::object());
    rail["rail"] = r.rail;
    AddSlaFields(rail, r.sla);
  }
  Json& hosts = j["hosts"] = Json::array();
  for (const analysis::HostSla& h : report->sla.hosts) {
    Json& host = hosts.emplace_back(Json::object());
    host["host"] = HostName(s, h.host);
    AddSlaFields(host, h.sla);
  }
  return DumpJson(j);
}

}  // namespace hostmesh::analyzer::api
