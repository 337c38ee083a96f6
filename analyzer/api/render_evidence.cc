#include "analyzer/api/render_evidence.h"

#include <cctype>
#include <charconv>

#include "analyzer/api/json_values.h"
#include "analyzer/api/render_fields.h"
#include "analyzer/telemetry/nic_counter_totals.h"

namespace hostmesh::analyzer::api {

namespace {

constexpr std::uint32_t kUnknownLink = 0xffffffffu;

// A group's component, named as the rest of the API names it.
Json GroupJson(const ApiSnapshot& s, const v1::evidence::Group& g) {
  Json j = Json::object();
  j["index"] = g.index();
  j["role"] = g.role();
  j["kind"] = g.kind();
  if (g.kind() == "link") {
    AddLinkRef(j, s, g.id());
  } else if (g.kind() == "switch") {
    AddSwitchRef(j, s, g.id());
  } else if (g.kind() == "rnic") {
    AddRnicRef(j, s, g.id(), g.nic());
  } else {
    j["host"] = HostName(s, g.id());
  }
  if (!g.agent_id().empty()) j["agent_id"] = g.agent_id();
  return j;
}

Json VerdictJson(const ApiSnapshot& s, const v1::evidence::WindowVerdict& v) {
  Json j = Json::object();
  j["start_ns"] = v.start_ns();
  j["end_ns"] = v.end_ns();
  j["loss"] = JsonNumber(v.loss());
  j["failures"] = v.failures();
  j["good"] = v.good();
  j["votes"] = v.votes();
  j["confidence"] = JsonNumber(v.confidence());
  j["background_loss"] = JsonNumber(v.background_loss());
  j["diagnosis"] = v.diagnosis();
  j["rule"] = v.rule();
  j["diagnosis_text"] = v.diagnosis_text();
  Json& rivals = j["rivals"] = Json::array();
  for (const v1::evidence::Rival& r : v.rivals()) {
    Json& rival = rivals.emplace_back(Json::object());
    rival["kind"] = r.kind();
    if (r.kind() == "switch") {
      AddSwitchRef(rival, s, r.id());
    } else {
      AddLinkRef(rival, s, r.id());
    }
    rival["failures"] = r.failures();
    rival["good"] = r.good();
    rival["loss"] = JsonNumber(r.loss());
    rival["score"] = JsonNumber(r.score());
    rival["votes"] = r.votes();
    rival["culprit"] = r.culprit();
  }
  return j;
}

Json CaptureJson(const v1::evidence::CaptureInfo& c) {
  Json j = Json::object();
  j["from_ns"] = c.from_ns();
  j["to_ns"] = c.to_ns();
  j["captured_ns"] = c.captured_ns();
  j["parts"] = c.parts();
  j["probes_kept"] = c.probes_kept();
  // Thinning: 1 is none; 0 means even the timeouts did not all fit.
  j["thinned_every"] =
      c.thinned_every() == 0 && c.probes_over_budget() == 0 ? 1 : c.thinned_every();
  j["probes_thinned"] = c.probes_thinned();
  j["probes_over_budget"] = c.probes_over_budget();
  j["bytes"] = c.bytes();
  j["tuples_capped"] = c.tuples_capped();
  j["tuples_uncounted"] = c.tuples_uncounted();
  j["verdicts_dropped"] = c.verdicts_dropped();
  j["flight_record_agents"] = Json::array();
  for (const std::string& a : c.flight_record_agents()) j["flight_record_agents"].push_back(a);
  return j;
}

Json CountersJson(const v1::evidence::Counters& c) {
  const v1::NicTelemetry& t = c.telemetry();
  Json j = Json::object();
  j["agent_id"] = c.agent_id();
  j["nic"] = t.nic();
  j["start_ns"] = t.start_ns();
  j["end_ns"] = t.end_ns();
  j["port_state"] = t.port_state();
  j["phys_state"] = t.phys_state();
  j["read_failures"] = t.read_failures();
  Json& deltas = j["deltas"] = Json::object();
  for (const v1::CounterDelta& d : t.deltas()) {
    std::string name = telemetry::CounterName(d.counter());
    if (d.has_priority()) name += "_prio" + std::to_string(d.priority());
    deltas[name] = d.delta();
  }
  return j;
}

// "probe", "async_event", ... from the wire's KIND_PROBE, KIND_ASYNC_EVENT.
std::string EventKindName(v1::FlightEvent::Kind kind) {
  std::string name = v1::FlightEvent::Kind_Name(kind);
  if (name.starts_with("KIND_")) name = name.substr(5);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

Json FlightRecordJson(const std::string& agent, const v1::FlightRecord& r) {
  Json j = Json::object();
  j["agent_id"] = agent;
  j["from_ns"] = r.from_ns();
  j["to_ns"] = r.to_ns();
  j["dropped_before"] = r.dropped_before();
  j["truncated"] = r.truncated();
  Json& events = j["events"] = Json::array();
  for (const v1::FlightEvent& e : r.events()) {
    Json& event = events.emplace_back(Json::object());
    event["time_ns"] = e.time_ns();
    event["kind"] = EventKindName(e.kind());
    event["nic"] = e.nic();
    if (e.kind() == v1::FlightEvent::KIND_PROBE || e.kind() == v1::FlightEvent::KIND_TRACE) {
      event["peer_nic"] = e.peer_nic();
      event["port"] = e.port();
    }
    event["value_ns"] = e.value_ns();
    event["value"] = e.value();
    event["flags"] = e.flags();
    if (!e.text().empty()) event["text"] = e.text();
  }
  return j;
}

}  // namespace

std::optional<IncidentPath> ParseIncidentPath(std::string_view rest) {
  IncidentPath out;
  const std::size_t slash = rest.find('/');
  const std::string_view number = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    if (rest.substr(slash) != "/evidence") return std::nullopt;
    out.evidence = true;
  }
  if (number.empty() || number.size() > 19 || number.front() == '0') return std::nullopt;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), out.id);
  if (ec != std::errc() || end != number.data() + number.size()) return std::nullopt;
  return out;
}

std::optional<std::string> RenderIncident(const ApiSnapshot& s, std::uint64_t id) {
  for (const analysis::Incident& inc : s.incidents) {
    if (inc.id != id) continue;
    Json j = IncidentJson(s, inc);
    j["evidence_url"] = "/api/v1/incidents/" + std::to_string(id) + "/evidence";
    return DumpJson(j);
  }
  return std::nullopt;
}

std::string RenderEvidence(const ApiSnapshot& s, const EvidenceAnswer& e) {
  const v1::evidence::EvidenceHeader& h = e.header;
  Json j = Json::object();
  j["version"] = 1;
  j["incident_id"] = h.incident_id();
  j["kind"] = h.kind();
  j["summary"] = h.summary();
  j["opened_ns"] = h.opened_ns();
  j["capture"] = CaptureJson(h.capture());
  Json& groups = j["groups"] = Json::array();
  for (const v1::evidence::Group& g : h.groups()) groups.push_back(GroupJson(s, g));
  Json& verdicts = j["verdicts"] = Json::array();
  for (const v1::evidence::WindowVerdict& v : h.verdicts()) verdicts.push_back(VerdictJson(s, v));
  // 5-tuples by position (probes refer to them), paths as link ids and names.
  Json& tuples = j["tuples"] = Json::array();
  for (const v1::evidence::Tuple& t : h.tuples()) {
    Json& tuple = tuples.emplace_back(Json::object());
    tuple["group"] = t.group();
    tuple["agent_id"] = t.agent_id();
    tuple["src_nic"] = t.src_nic();
    tuple["dst_nic"] = t.dst_nic();
    tuple["src_port"] = t.src_port();
    tuple["dst_port"] = t.dst_port();
    Json& path = tuple["path"] = Json::array();
    for (const std::uint32_t l : t.links()) {
      path.push_back(l == kUnknownLink ? Json(nullptr) : LinkNameJson(s, l));
    }
  }
  // Probes as rows under named columns: thousands of them stay compact.
  Json& probes = j["probes"] = Json::object();
  probes["columns"] = {"tuple", "send_time_ns", "timeout", "network_ns", "processing_ns"};
  Json& rows = probes["rows"] = Json::array();
  Json& counters = j["counters"] = Json::array();
  for (const v1::evidence::EvidencePart& part : e.parts) {
    for (const v1::evidence::Probe& p : part.probes()) {
      rows.push_back({p.tuple(), p.send_time_ns(), p.timeout(), p.network_ns(), p.processing_ns()});
    }
    for (const v1::evidence::Counters& c : part.counters()) counters.push_back(CountersJson(c));
  }
  Json& flight = j["flight_records"] = Json::array();
  for (const auto& [agent, record] : e.flight_records) {
    flight.push_back(FlightRecordJson(agent, record));
  }
  if (!e.flight_record_error.empty()) j["flight_record_error"] = e.flight_record_error;
  return DumpJson(j);
}

}  // namespace hostmesh::analyzer::api
