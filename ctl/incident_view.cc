#include "ctl/incident_view.h"

#include <map>
#include <vector>

namespace hostmesh::ctl {

namespace {

std::string Str(const JsonNode& node, const std::string& path) {
  return JsonString(node, path).value_or("");
}

std::string GroupName(const JsonNode& g) {
  const std::string kind = Str(g, "kind");
  if (kind == "rnic") return "rnic " + Str(g, "host") + "/" + Str(g, "nic_name");
  if (kind == "host") return "host " + Str(g, "host");
  return kind + " " + Str(g, "name");
}

struct GroupProbes {
  std::uint64_t probes = 0;
  std::uint64_t timeouts = 0;
  std::int64_t first_timeout = 0;
  std::int64_t last_ok_before = 0;  // the last answered probe before the first timeout
};

// Per group: probes, timeouts, and when they began to fail.
std::vector<GroupProbes> CountProbes(const JsonNode& evidence, std::size_t groups) {
  std::vector<GroupProbes> out(groups);
  const std::vector<const JsonNode*> tuples = JsonArray(evidence, "tuples");
  for (const JsonNode* row : JsonArray(evidence, "probes.rows")) {
    if (!row->is_array() || row->size() < 3 || !(*row)[0].is_number_unsigned()) continue;
    const std::size_t tuple = (*row)[0].get<std::size_t>();
    if (tuple >= tuples.size()) continue;
    const std::size_t group =
        static_cast<std::size_t>(JsonInt(*tuples[tuple], "group").value_or(0));
    if (group >= groups) continue;
    GroupProbes& g = out[group];
    const std::int64_t t = (*row)[1].is_number_integer() ? (*row)[1].get<std::int64_t>() : 0;
    ++g.probes;
    if ((*row)[2].is_boolean() && (*row)[2].get<bool>()) {
      ++g.timeouts;
      if (g.first_timeout == 0 || t < g.first_timeout) g.first_timeout = t;
    }
  }
  // The last success before the first timeout: how close the capture saw the onset.
  for (const JsonNode* row : JsonArray(evidence, "probes.rows")) {
    if (!row->is_array() || row->size() < 3 || !(*row)[0].is_number_unsigned()) continue;
    const std::size_t tuple = (*row)[0].get<std::size_t>();
    if (tuple >= tuples.size()) continue;
    const std::size_t group =
        static_cast<std::size_t>(JsonInt(*tuples[tuple], "group").value_or(0));
    if (group >= groups || !(*row)[2].is_boolean() || (*row)[2].get<bool>()) continue;
    const std::int64_t t = (*row)[1].is_number_integer() ? (*row)[1].get<std::int64_t>() : 0;
    GroupProbes& g = out[group];
    if (g.first_timeout != 0 && t < g.first_timeout && t > g.last_ok_before) g.last_ok_before = t;
  }
  return out;
}

std::string GroupsTable(const JsonNode& evidence) {
  const std::vector<const JsonNode*> groups = JsonArray(evidence, "groups");
  const std::vector<GroupProbes> counts = CountProbes(evidence, groups.size());
  TextTable table({"ROLE", "COMPONENT", "PROBES", "TIMEOUTS", "LOSS", "LAST OK", "FIRST TIMEOUT"},
                  {false, false, true, true, true, false, false});
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const GroupProbes& g = counts[i];
    table.Add({Str(*groups[i], "role"), GroupName(*groups[i]), std::to_string(g.probes),
               std::to_string(g.timeouts),
               g.probes
                   ? FormatPercent(static_cast<double>(g.timeouts) / static_cast<double>(g.probes))
                   : "-",
               FormatWallTime(g.last_ok_before), FormatWallTime(g.first_timeout)});
  }
  return table.Render();
}

std::string VerdictsTable(const JsonNode& evidence) {
  TextTable table({"WINDOW", "LOSS", "FAILURES", "GOOD", "CONFIDENCE", "RIVALS"},
                  {false, true, true, true, true, false});
  const std::vector<const JsonNode*> verdicts = JsonArray(evidence, "verdicts");
  // The latest 10: the onset is in the groups table and the JSON.
  const std::size_t from = verdicts.size() > 10 ? verdicts.size() - 10 : 0;
  for (std::size_t i = from; i < verdicts.size(); ++i) {
    const JsonNode& v = *verdicts[i];
    std::string rivals;
    for (const JsonNode* r : JsonArray(v, "rivals")) {
      if (!rivals.empty()) rivals += ", ";
      rivals += Str(*r, "name") + " " + FormatPercent(JsonNumber(*r, "loss").value_or(0));
    }
    table.Add({FormatWallTime(JsonInt(v, "start_ns").value_or(0)),
               FormatPercent(JsonNumber(v, "loss").value_or(0)),
               std::to_string(JsonInt(v, "failures").value_or(0)),
               std::to_string(JsonInt(v, "good").value_or(0)),
               FormatPercent(JsonNumber(v, "confidence").value_or(0)),
               rivals.empty() ? "-" : rivals});
  }
  return table.Render();
}

// Counters that rose over the capture, summed per agent and NIC.
std::string MovedCounters(const JsonNode& evidence) {
  std::map<std::string, std::map<std::string, std::uint64_t>> moved;
  for (const JsonNode* c : JsonArray(evidence, "counters")) {
    const JsonNode* deltas = JsonChild(*c, "deltas");
    if (deltas == nullptr || !deltas->is_object()) continue;
    const std::string nic = Str(*c, "agent_id") + " nic " + Str(*c, "nic");
    for (const auto& [name, value] : deltas->items()) {
      if (value.is_number_integer() && value.get<std::int64_t>() > 0) {
        moved[nic][name] += static_cast<std::uint64_t>(value.get<std::int64_t>());
      }
    }
  }
  if (moved.empty()) return "counters: none moved\n";
  std::string out = "counters that moved:\n";
  for (const auto& [nic, counters] : moved) {
    out += "  " + nic + ":";
    for (const auto& [name, value] : counters) out += " " + name + " +" + std::to_string(value);
    out += "\n";
  }
  return out;
}

// The agents' flight recorders kept with it: events per agent, and the last
// warn+ log lines (the likeliest first clue).
std::string FlightRecorders(const JsonNode& evidence) {
  const std::vector<const JsonNode*> records = JsonArray(evidence, "flight_records");
  if (records.empty()) return "flight recorders: none kept\n";
  std::string out = "flight recorders:\n";
  for (const JsonNode* r : records) {
    const std::vector<const JsonNode*> events = JsonArray(*r, "events");
    out += "  " + Str(*r, "agent_id") + ": " + std::to_string(events.size()) + " events";
    if (JsonInt(*r, "dropped_before").value_or(0) > 0) {
      out += " (" + Str(*r, "dropped_before") + " older ones already overwritten)";
    }
    out += "\n";
    std::vector<const JsonNode*> logs;
    for (const JsonNode* e : events) {
      if (Str(*e, "kind") == "log") logs.push_back(e);
    }
    for (std::size_t i = logs.size() > 3 ? logs.size() - 3 : 0; i < logs.size(); ++i) {
      out += "    " + FormatWallTime(JsonInt(*logs[i], "time_ns").value_or(0)) + " " +
             Str(*logs[i], "text") + "\n";
    }
  }
  return out;
}

}  // namespace

OncallView RenderIncident(const JsonNode& incident, const JsonNode* evidence) {
  OncallView v;
  if (!JsonInt(incident, "id") || !JsonString(incident, "kind")) {
    v.exit_code = kOncallBadResponse;
    v.error = "not an incident: no 'id' or 'kind'";
    return v;
  }
  const bool open = JsonBool(incident, "open").value_or(false);
  v.exit_code = open ? kOncallAnomalous : kOncallHealthy;
  v.text = "incident " + Str(incident, "id") + "  " + Str(incident, "kind") + "  " +
           Str(incident, "summary") + "  " + (open ? "OPEN" : "resolved") + "\n";
  v.text += "first seen " + FormatWallTime(JsonInt(incident, "first_seen_ns").value_or(0)) +
            ", last seen " + FormatWallTime(JsonInt(incident, "last_seen_ns").value_or(0)) +
            ", confidence " + FormatPercent(JsonNumber(incident, "confidence").value_or(0)) + "\n";
  const std::string type = Str(incident, "diagnosis.type");
  if (!type.empty()) {
    v.text += "diagnosis: " + type;
    const std::string why = Str(incident, "diagnosis.evidence");
    if (!why.empty()) v.text += ": " + why;
    v.text += "\n";
  }
  if (evidence == nullptr) {
    v.text += "evidence: none kept (never captured, expired, or dropped for the disk cap)\n";
    return v;
  }
  const JsonNode* capture = JsonChild(*evidence, "capture");
  if (capture == nullptr) {
    v.exit_code = kOncallBadResponse;
    v.error = "not an incident's evidence: no 'capture'";
    return v;
  }
  v.text += "\nprobes " + FormatWallTime(JsonInt(*capture, "from_ns").value_or(0)) + " to " +
            FormatWallTime(JsonInt(*capture, "to_ns").value_or(0)) + ": " +
            Str(*capture, "probes_kept") + " kept";
  if (JsonInt(*capture, "probes_thinned").value_or(0) > 0) {
    v.text += ", successes thinned 1 in " + Str(*capture, "thinned_every") + " for the budget";
  }
  v.text += ", " + std::to_string(JsonArray(*evidence, "tuples").size()) + " 5-tuples";
  if (JsonBool(*capture, "tuples_capped").value_or(false)) v.text += " (a sample)";
  v.text += "\n" + GroupsTable(*evidence);
  v.text += "\nwindows that found it:\n" + VerdictsTable(*evidence);
  v.text += "\n" + MovedCounters(*evidence);
  v.text += FlightRecorders(*evidence);
  return v;
}

}  // namespace hostmesh::ctl
