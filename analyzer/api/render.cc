#include "analyzer/api/render.h"

#include <algorithm>
#include <unordered_map>

#include "analyzer/api/json_writer.h"

namespace hostmesh::analyzer::api {
namespace {

using analysis::WindowReport;

const HostInfo* HostOf(const ApiSnapshot& s, analysis::HostId host) {
  return host < s.hosts.size() ? &s.hosts[host] : nullptr;
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
  if (link < s.links.size()) {
    const LinkInfo& info = s.links[link];
    w.Key("name").String(info.name).Key("ends").BeginArray();
    WriteLinkEnd(w, info.lower);
    WriteLinkEnd(w, info.upper);
    w.EndArray();
  } else {
    w.Key("name").String("link " + std::to_string(link)).Key("ends").Null();
  }
}

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

void WriteIncident(JsonWriter& w, const ApiSnapshot& s, const analysis::Incident& inc) {
  using analysis::IncidentKind;
  w.BeginObject().Key("id").Uint(inc.id).Key("kind").String(analysis::IncidentKindName(inc.kind));
  w.Key("summary").String(inc.summary).Key("suspect").BeginObject();
  switch (inc.kind) {
    case IncidentKind::kRnicDown:
    case IncidentKind::kRnicLossy:
      WriteRnicRef(w, s, inc.suspect.host, inc.suspect.nic);
      break;
    case IncidentKind::kHostProcessing:
      w.Key("host").String(HostName(s, inc.suspect.host));
      break;
    case IncidentKind::kSwitch:
      w.Key("switch").Uint(inc.suspect.link);
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
  w.Key("example_paths").BeginArray();
  for (const auto& path : e.example_paths) {
    w.BeginArray();
    for (const analysis::LinkId link : path) w.Uint(link);
    w.EndArray();
  }
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
  w.Key("agents_known").Uint(s.hosts.size());
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

std::string RenderLinks(const ApiSnapshot& s, bool suspicious_only) {
  JsonWriter w;
  const WindowReport* report = s.report.get();
  w.BeginObject();
  WriteWindow(w, report);
  w.Key("method").String("greedy loss-weighted inference; votes: paper Algorithm 1");
  w.Key("links").BeginArray();
  if (report != nullptr) {
    std::unordered_map<analysis::LinkId, std::uint64_t> votes;
    for (const analysis::LinkRank& b : report->loss.baseline) votes[b.link] = b.votes;
    std::uint64_t rank = 0;
    for (const analysis::LinkRank& l : report->loss.links) {
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
