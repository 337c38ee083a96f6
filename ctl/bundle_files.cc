#include "ctl/bundle_files.h"

#include <optional>

#include "ctl/oncall_view.h"

namespace hostmesh::ctl {

namespace {

std::string Text(const JsonNode& node, const std::string& path) {
  return JsonString(node, path).value_or("");
}

std::string Row(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    line += CsvField(fields[i]);
  }
  return line + "\n";
}

// The cell of a probe row's column, as text.
std::string Cell(const JsonNode& row, std::size_t i) {
  if (!row.is_array() || i >= row.size()) return "";
  const JsonNode& v = row[i];
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string ProbesCsv(const JsonNode& e) {
  const std::vector<const JsonNode*> tuples = JsonArray(e, "tuples");
  const std::vector<const JsonNode*> groups = JsonArray(e, "groups");
  std::string out = Row({"tuple", "group", "role", "agent_id", "src_nic", "dst_nic", "src_port",
                         "dst_port", "send_time_ns", "timeout", "network_ns", "processing_ns"});
  for (const JsonNode* row : JsonArray(e, "probes.rows")) {
    const std::size_t t = row->is_array() && !row->empty() && (*row)[0].is_number_unsigned()
                              ? (*row)[0].get<std::size_t>()
                              : tuples.size();
    if (t >= tuples.size()) continue;
    const JsonNode& tuple = *tuples[t];
    const std::int64_t g = JsonInt(tuple, "group").value_or(-1);
    const std::string role =
        g >= 0 && static_cast<std::size_t>(g) < groups.size() ? Text(*groups[g], "role") : "";
    out +=
        Row({Cell(*row, 0), Text(tuple, "group"), role, Text(tuple, "agent_id"),
             Text(tuple, "src_nic"), Text(tuple, "dst_nic"), Text(tuple, "src_port"),
             Text(tuple, "dst_port"), Cell(*row, 1), Cell(*row, 2), Cell(*row, 3), Cell(*row, 4)});
  }
  return out;
}

std::string PathsCsv(const JsonNode& e) {
  std::string out =
      Row({"tuple", "group", "agent_id", "src_nic", "dst_nic", "src_port", "hop", "link", "name"});
  const std::vector<const JsonNode*> tuples = JsonArray(e, "tuples");
  for (std::size_t t = 0; t < tuples.size(); ++t) {
    const JsonNode& tuple = *tuples[t];
    std::size_t hop = 0;
    for (const JsonNode* link : JsonArray(tuple, "path")) {
      const bool known = link->is_object();
      out += Row({std::to_string(t), Text(tuple, "group"), Text(tuple, "agent_id"),
                  Text(tuple, "src_nic"), Text(tuple, "dst_nic"), Text(tuple, "src_port"),
                  std::to_string(hop++), known ? Text(*link, "link") : "",
                  known ? Text(*link, "name") : "unknown"});
    }
  }
  return out;
}

std::string VerdictsCsv(const JsonNode& e) {
  std::string out = Row({"start_ns", "end_ns", "loss", "failures", "good", "votes", "confidence",
                         "background_loss", "diagnosis", "rule", "rivals"});
  for (const JsonNode* v : JsonArray(e, "verdicts")) {
    std::string rivals;
    for (const JsonNode* r : JsonArray(*v, "rivals")) {
      if (!rivals.empty()) rivals += "; ";
      rivals += Text(*r, "name") + " " + Text(*r, "loss");
    }
    out += Row({Text(*v, "start_ns"), Text(*v, "end_ns"), Text(*v, "loss"), Text(*v, "failures"),
                Text(*v, "good"), Text(*v, "votes"), Text(*v, "confidence"),
                Text(*v, "background_loss"), Text(*v, "diagnosis"), Text(*v, "rule"), rivals});
  }
  return out;
}

std::string CountersCsv(const JsonNode& e) {
  std::string out = Row(
      {"agent_id", "nic", "start_ns", "end_ns", "port_state", "phys_state", "counter", "delta"});
  for (const JsonNode* c : JsonArray(e, "counters")) {
    const JsonNode* deltas = JsonChild(*c, "deltas");
    if (deltas == nullptr || !deltas->is_object()) continue;
    for (const auto& [name, value] : deltas->items()) {
      out += Row({Text(*c, "agent_id"), Text(*c, "nic"), Text(*c, "start_ns"), Text(*c, "end_ns"),
                  Text(*c, "port_state"), Text(*c, "phys_state"), name,
                  value.is_number_integer() ? std::to_string(value.get<std::int64_t>()) : ""});
    }
  }
  return out;
}

std::string FlightRecords(const JsonNode& e) {
  std::string out;
  for (const JsonNode* r : JsonArray(e, "flight_records")) out += r->dump() + "\n";
  return out;
}

std::string Readme(std::uint64_t id, const BundleInputs& in, const JsonNode& e,
                   bool flight_records) {
  std::string out = "hostmesh support bundle: incident " + std::to_string(id) + "\n";
  out += "made " + FormatWallTime(in.made_ns) + " by hostmeshctl from the analyzer at " +
         in.analyzer + "\n";
  out += "kind " + Text(e, "kind") + ", " + Text(e, "summary") + "\n\n";
  out += R"(Files (times are Unix nanoseconds; NICs are the agents' NIC ids):
  incident.json        the incident as /api/v1/incidents/ID serves it (absent when it
                       was resolved longer ago than the analyzer lists)
  evidence.json        the evidence as /api/v1/incidents/ID/evidence serves it (version 1;
                       docs/analyzer.md, "Evidence")
  verdicts.csv         one row per judged window that found it: loss estimate, failures,
                       good probes, paper votes, confidence, diagnosis, the rivals it beat
  probes.csv           every kept probe of the 5-tuples followed: its 5-tuple, group
                       (0 the suspect, others healthy siblings), send time, timeout,
                       network delay (3)-(2) and processing delay ((4)-(1))-((3)-(2))
  paths.csv            each 5-tuple's path hop by hop (link id and name; "unknown" where
                       a trace left the position open)
  counters.csv         NIC counter deltas of the involved hosts over the capture
  flight-records.jsonl the involved agents' flight-recorder extracts, one per line
  analyzer.json        the analyzer's version and effective config, with TLS keys and
                       the bearer token file left out
)";
  if (!flight_records) out += "\nNo flight-recorder extract was kept for this incident.\n";
  if (in.config.empty()) out += "The analyzer did not serve its config (/api/v1/config).\n";
  if (JsonInt(e, "capture.probes_thinned").value_or(0) > 0) {
    out += "Successes were thinned 1 in " + Text(e, "capture.thinned_every") +
           " to fit the incident's byte budget; every timeout is kept.\n";
  }
  return out;
}

}  // namespace

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::optional<std::vector<BundleFile>> MakeBundle(std::uint64_t incident_id, const BundleInputs& in,
                                                  std::string* error) {
  const auto evidence = ParseJson(in.evidence, error);
  if (!evidence) return std::nullopt;
  if (JsonChild(*evidence, "capture") == nullptr || JsonChild(*evidence, "probes") == nullptr) {
    *error = "not an incident's evidence: no 'capture' or 'probes'";
    return std::nullopt;
  }
  const std::string flight = FlightRecords(*evidence);
  std::vector<BundleFile> files;
  files.push_back({"README.txt", Readme(incident_id, in, *evidence, !flight.empty())});
  if (!in.incident.empty()) files.push_back({"incident.json", in.incident});
  files.push_back({"evidence.json", in.evidence});
  files.push_back({"verdicts.csv", VerdictsCsv(*evidence)});
  files.push_back({"probes.csv", ProbesCsv(*evidence)});
  files.push_back({"paths.csv", PathsCsv(*evidence)});
  files.push_back({"counters.csv", CountersCsv(*evidence)});
  files.push_back({"flight-records.jsonl", flight});
  if (!in.config.empty()) files.push_back({"analyzer.json", in.config});
  return files;
}

}  // namespace hostmesh::ctl
