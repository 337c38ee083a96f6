#include "ctl/oncall_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>

namespace hostmesh::ctl {
namespace {

std::string Printf(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string Str(const JsonNode& node, const std::string& path, const std::string& fallback = "") {
  return JsonString(node, path).value_or(fallback);
}

std::string OrDash(const std::string& text) {
  return text.empty() ? "-" : text;
}

std::string Count(std::size_t n, const std::string& singular, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

OncallView Bad(const std::string& why) {
  OncallView v;
  v.exit_code = kOncallBadResponse;
  v.error = "unexpected response: " + why;
  return v;
}

// "window 2024-05-01 12:00:00Z + 20 s, 123 results", or the note that none
// is judged yet.
std::string WindowLine(const JsonNode& body) {
  if (JsonIsNull(body, "window")) return "window: none judged yet\n";
  const auto start = JsonInt(body, "window.start_ns").value_or(0);
  const auto end = JsonInt(body, "window.end_ns").value_or(0);
  return "window: " + FormatWallTime(start) + " + " +
         FormatSeconds(static_cast<double>(end - start) / 1e9) + ", " +
         std::to_string(JsonInt(body, "window.results").value_or(0)) + " results\n";
}

std::string RnicName(const JsonNode& r) {
  const std::string name = Str(r, "nic_name");
  return name.empty() ? "nic#" + Str(r, "nic", "?") : name;
}

std::string RnicRef(const JsonNode& r) {
  return Str(r, "host", "?") + "/" + RnicName(r);
}

std::string LinkEndDevice(const JsonNode& end) {
  const std::string device = Str(end, "device");
  const std::string port = Str(end, "port");
  if (device.empty()) return "?";
  return port.empty() ? device : device + ":" + port;
}

// "h000:nic0 - p0r0:h000" and "198.18.0.1 - 198.18.0.0", or "-" without ends.
std::pair<std::string, std::string> LinkEnds(const JsonNode& link) {
  const auto ends = JsonArray(link, "ends");
  if (ends.size() != 2) return {"-", "-"};
  const std::string ip0 = Str(*ends[0], "ip");
  const std::string ip1 = Str(*ends[1], "ip");
  return {LinkEndDevice(*ends[0]) + " - " + LinkEndDevice(*ends[1]),
          OrDash(ip0) + " - " + OrDash(ip1)};
}

std::string Quantile(const JsonNode& row, const std::string& key, const std::string& q) {
  if (JsonInt(row, key + ".count").value_or(0) == 0) return "-";
  const auto v = JsonNumber(row, key + "." + q);
  return v ? FormatNanoseconds(*v) : "-";
}

OncallView Status(const JsonNode& body) {
  const auto known = JsonInt(body, "agents_known");
  if (!known) return Bad("no 'agents_known' in /api/v1/status");
  OncallView v;
  const double window = JsonNumber(body, "window_seconds").value_or(0);
  const double grace = JsonNumber(body, "grace_seconds").value_or(0);
  const auto present = JsonInt(body, "agents_present").value_or(0);
  const auto open = JsonInt(body, "open_incidents").value_or(0);
  const auto lag = JsonNumber(body, "window_lag_seconds");
  std::string text;
  text += "version:    " + Str(body, "version", "?") + ", up " +
          FormatSeconds(JsonNumber(body, "uptime_seconds").value_or(0)) + "\n";
  text += "windows:    " + FormatSeconds(window) + " (grace " + FormatSeconds(grace) + ")";
  if (!JsonIsNull(body, "window")) {
    text += "; last judged " + FormatWallTime(JsonInt(body, "window.start_ns").value_or(0)) + ", " +
            std::to_string(JsonInt(body, "window.results").value_or(0)) + " results";
  } else {
    text += "; none judged yet";
  }
  text += "\n";
  if (lag) text += "lag:        " + Printf("%.1f s", *lag) + "\n";
  text += "agents:     " + std::to_string(present) + " present of " + std::to_string(*known) +
          " known\n";
  // Hosts probing at a fraction of their rate under host pressure: not a
  // problem of the fabric, so no health line of their own.
  for (const JsonNode* h : JsonArray(body, "hosts_shedding")) {
    text += "shedding:   " + Str(*h, "host", "?") + " probes at " +
            Printf("%g", JsonNumber(*h, "rate_fraction").value_or(1)) + " of its rate (" +
            Str(*h, "cause", "?") + ")\n";
  }
  const auto inventory = JsonBool(body, "inventory_loaded");
  text += std::string("inventory:  ") +
          (inventory.value_or(false) ? "loaded" : "none (links shown by id)") + "\n";
  text += "incidents:  " + std::to_string(open) + " open" +
          (open > 0 ? " (hostmeshctl incidents)" : "") + "\n";
  std::vector<std::string> problems;
  const double stale_after = 2 * (window + grace) + 10;
  if (lag && *lag > stale_after) {
    problems.push_back("stale: the latest judged window is " + Printf("%.0f", *lag) +
                       " s old (more than " + Printf("%.0f", stale_after) + " s)");
  }
  if (*known > 0 && present == 0 && !JsonIsNull(body, "window")) {
    problems.push_back("no agent reported in the latest window");
  }
  if (problems.empty()) {
    text += "health:     healthy\n";
  } else {
    v.exit_code = kOncallAnomalous;
    for (const auto& p : problems) text += "health:     " + p + "\n";
  }
  v.text = std::move(text);
  return v;
}

// The RNIC's counters that moved in the window ("symbol_error +4210,
// link_downed +2"), "none moved", or "-" without telemetry for it.
std::string CounterDeltas(const JsonNode& r) {
  const JsonNode* counters = JsonChild(r, "telemetry.counters");
  if (counters == nullptr || !counters->is_object()) return "-";
  std::string moved;
  for (const auto& [name, delta] : counters->items()) {
    if (!delta.is_number_unsigned() || delta.get<std::uint64_t>() == 0) continue;
    moved += (moved.empty() ? "" : ", ") + name + " +" + std::to_string(delta.get<std::uint64_t>());
  }
  return moved.empty() ? "none moved" : moved;
}

OncallView Rnics(const JsonNode& body) {
  if (JsonChild(body, "rnics") == nullptr) return Bad("no 'rnics' in /api/v1/rnics");
  OncallView v;
  TextTable table(
      {"RNIC", "HOST", "RAIL", "IP", "STATE", "LOSS", "TIMEOUTS", "PAPER", "COUNTERS (WINDOW)"},
      {false, false, true, false, false, true, true, false, false});
  std::vector<std::string> bad;
  std::size_t paper_only = 0;
  const auto rnics = JsonArray(body, "rnics");
  for (const JsonNode* r : rnics) {
    const std::string state = Str(*r, "state", "?");
    const bool anomalous = JsonBool(*r, "anomalous").value_or(false);
    const bool paper = JsonBool(*r, "paper_anomalous").value_or(false);
    const auto rail = JsonInt(*r, "rail").value_or(-1);
    const auto loss = JsonNumber(*r, "loss");
    table.Add({RnicName(*r), Str(*r, "host", "?"), rail < 0 ? "-" : std::to_string(rail),
               OrDash(Str(*r, "ip")), state, loss ? FormatPercent(*loss) : "-",
               std::to_string(JsonInt(*r, "timeouts").value_or(0)) + "/" +
                   std::to_string(JsonInt(*r, "probes").value_or(0)),
               paper ? "anomalous" : "ok", CounterDeltas(*r)});
    const bool not_ok = state != "ok" || anomalous;
    if (not_ok) bad.push_back(RnicRef(*r) + " " + state);
    if (paper && !not_ok) ++paper_only;
  }
  v.text = WindowLine(body);
  if (rnics.empty()) {
    v.text += "no RNICs reported\n";
    return v;
  }
  v.text += table.Render();
  v.text += Count(rnics.size(), "RNIC", "RNICs") + ", " + std::to_string(bad.size()) + " not ok";
  for (std::size_t i = 0; i < bad.size() && i < 8; ++i) v.text += (i ? ", " : ": ") + bad[i];
  if (bad.size() > 8) v.text += ", ...";
  v.text += "\n";
  if (paper_only > 0) {
    v.text += Count(paper_only, "more RNIC crosses", "more RNICs cross") +
              " the paper's 10% rule; the path-aware verdict explains their timeouts by "
              "other RNICs or links (see hostmeshctl incidents, links --suspicious)\n";
  }
  if (!bad.empty()) v.exit_code = kOncallAnomalous;
  return v;
}

OncallView Links(const JsonNode& body, const OncallViewOptions& options) {
  if (JsonChild(body, "links") == nullptr) return Bad("no 'links' in /api/v1/links");
  OncallView v;
  TextTable table(
      {"RANK", "LINK", "DEVICES", "ENDPOINT IPS", "LOSS", "FAILED/GOOD", "VOTES", "VERDICT"},
      {true, false, false, false, true, true, true, false});
  std::vector<std::string> suspects;
  const auto links = JsonArray(body, "links");
  for (const JsonNode* l : links) {
    const bool culprit = JsonBool(*l, "culprit").value_or(false);
    const std::string name = Str(*l, "name", "link " + Str(*l, "link", "?"));
    if (culprit) suspects.push_back(name);
    if (options.links_limit != 0 && table.rows() >= options.links_limit) continue;
    const auto [devices, ips] = LinkEnds(*l);
    const auto loss = JsonNumber(*l, "loss");
    table.Add({Str(*l, "rank", "?"), name, devices, ips, loss ? FormatPercent(*loss) : "-",
               std::to_string(JsonInt(*l, "failures").value_or(0)) + "/" +
                   std::to_string(JsonInt(*l, "good").value_or(0)),
               std::to_string(JsonInt(*l, "votes").value_or(0)), culprit ? "suspect" : ""});
  }
  v.text = WindowLine(body);
  if (const auto method = JsonString(body, "method")) v.text += "method: " + *method + "\n";
  if (links.empty()) {
    v.text += "no links to report\n";
    return v;
  }
  v.text += table.Render();
  if (table.rows() < links.size()) {
    v.text += "... " + std::to_string(links.size() - table.rows()) + " more (--limit 0 for all)\n";
  }
  v.text += Count(suspects.size(), "suspect link", "suspect links");
  for (std::size_t i = 0; i < suspects.size() && i < 8; ++i) {
    v.text += (i ? ", " : ": ") + suspects[i];
  }
  if (suspects.size() > 8) v.text += ", ...";
  v.text += "\n";
  if (!suspects.empty()) v.exit_code = kOncallAnomalous;
  return v;
}

std::string Suspect(const JsonNode& incident) {
  const JsonNode* s = JsonChild(incident, "suspect");
  if (s == nullptr) return "?";
  if (JsonChild(*s, "nic") != nullptr) return RnicRef(*s);
  if (const auto sw = JsonString(*s, "switch")) {
    return "switch " + JsonString(*s, "name").value_or(*sw);
  }
  if (const auto name = JsonString(*s, "name")) return *name;
  if (const auto link = JsonString(*s, "link")) return "link " + *link;
  if (const auto host = JsonString(*s, "host")) return *host;
  return "?";
}

// The diagnosis' type, "-" before any window was diagnosed (or from an older analyzer).
std::string DiagnosisType(const JsonNode& incident) {
  const JsonNode* d = JsonChild(incident, "diagnosis");
  if (d == nullptr || JsonString(*d, "rule").value_or("").empty()) return "-";
  return JsonString(*d, "type").value_or("-");
}

OncallView Incidents(const JsonNode& body) {
  if (JsonChild(body, "open") == nullptr || JsonChild(body, "resolved") == nullptr) {
    return Bad("no 'open' and 'resolved' in /api/v1/incidents");
  }
  OncallView v;
  TextTable table(
      {"ID", "KIND", "DIAGNOSIS", "SUSPECT", "CONFIDENCE", "FIRST SEEN", "LAST SEEN", "STATE"},
      {true, false, false, false, true, false, false, false});
  std::string evidence;  // of the open incidents, under the table
  const auto open = JsonArray(body, "open");
  const auto resolved = JsonArray(body, "resolved");
  for (const auto* list : {&open, &resolved}) {
    for (const JsonNode* inc : *list) {
      const auto confidence = JsonNumber(*inc, "confidence");
      std::string state = list == &open ? "open" : "resolved";
      if (list != &open) {
        const auto at = JsonInt(*inc, "resolved_ns").value_or(0);
        if (at > 0) state += " " + FormatWallTime(at);
      }
      const std::string type = DiagnosisType(*inc);
      if (list == &open && type != "-") {
        evidence += "#" + Str(*inc, "id", "?") + " " + type + ": " +
                    JsonString(*JsonChild(*inc, "diagnosis"), "evidence").value_or("") + "\n";
      }
      table.Add({Str(*inc, "id", "?"), Str(*inc, "kind", "?"), type, Suspect(*inc),
                 confidence ? Printf("%.2f", *confidence) : "-",
                 FormatWallTime(JsonInt(*inc, "first_seen_ns").value_or(0)),
                 FormatWallTime(JsonInt(*inc, "last_seen_ns").value_or(0)), state});
    }
  }
  if (table.rows() == 0) {
    v.text = "no incidents\n";
    return v;
  }
  v.text = table.Render() + std::to_string(open.size()) + " open, " +
           std::to_string(resolved.size()) + " resolved\n" + evidence;
  if (!open.empty()) v.exit_code = kOncallAnomalous;
  return v;
}

OncallView Sla(const JsonNode& body, const OncallViewOptions& options) {
  if (JsonChild(body, "cluster") == nullptr) return Bad("no 'cluster' in /api/v1/sla");
  OncallView v;
  v.text = WindowLine(body);
  if (JsonIsNull(body, "cluster")) {
    v.text += "no SLA figures yet\n";
    return v;
  }
  TextTable table(
      {"SCOPE", "PROBES", "RNIC DROP", "NET DROP", "LAT P50", "LAT P99", "LAT P99.9", "PROC P99"},
      {false, true, true, true, true, true, true, true});
  std::vector<std::string> over;
  auto add = [&](const std::string& scope, const JsonNode& row) {
    const auto rnic = JsonNumber(row, "rnic_drop_rate");
    const auto net = JsonNumber(row, "network_drop_rate");
    table.Add({scope, std::to_string(JsonInt(row, "probes").value_or(0)),
               rnic ? FormatPercent(*rnic) : "-", net ? FormatPercent(*net) : "-",
               Quantile(row, "latency_ns", "p50"), Quantile(row, "latency_ns", "p99"),
               Quantile(row, "latency_ns", "p999"), Quantile(row, "processing_ns", "p99")});
    if (rnic.value_or(0) > options.max_drop_rate || net.value_or(0) > options.max_drop_rate) {
      over.push_back(scope);
    }
  };
  add("cluster", *JsonChild(body, "cluster"));
  for (const JsonNode* r : JsonArray(body, "rails")) add("rail " + Str(*r, "rail", "?"), *r);
  for (const JsonNode* h : JsonArray(body, "hosts")) add("host " + Str(*h, "host", "?"), *h);
  v.text += table.Render();
  if (over.empty()) {
    v.text += "drop rates within " + FormatPercent(options.max_drop_rate) + "\n";
  } else {
    v.text += "drop rate above " + FormatPercent(options.max_drop_rate) + ": ";
    for (std::size_t i = 0; i < over.size() && i < 8; ++i) v.text += (i ? ", " : "") + over[i];
    if (over.size() > 8) v.text += ", ...";
    v.text += "\n";
    v.exit_code = kOncallAnomalous;
  }
  return v;
}

}  // namespace

std::string OncallApiPath(OncallCommand command, bool suspicious) {
  switch (command) {
    case OncallCommand::kStatus:
      return "/api/v1/status";
    case OncallCommand::kRnics:
      return "/api/v1/rnics";
    case OncallCommand::kLinks:
      return suspicious ? "/api/v1/links?suspicious" : "/api/v1/links";
    case OncallCommand::kIncidents:
      return "/api/v1/incidents";
    case OncallCommand::kSla:
      return "/api/v1/sla";
  }
  return "/api/v1/status";
}

OncallView RenderOncall(OncallCommand command, const JsonNode& body,
                        const OncallViewOptions& options) {
  switch (command) {
    case OncallCommand::kStatus:
      return Status(body);
    case OncallCommand::kRnics:
      return Rnics(body);
    case OncallCommand::kLinks:
      return Links(body, options);
    case OncallCommand::kIncidents:
      return Incidents(body);
    case OncallCommand::kSla:
      return Sla(body, options);
  }
  return Bad("unknown command");
}

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> right)
    : header_(std::move(header)), right_(std::move(right)) {
  right_.resize(header_.size(), false);
}

void TextTable::Add(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

std::string TextTable::Render() const {
  std::vector<std::size_t> width(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      if (c > 0) text += "  ";
      text += right_[c] ? pad + cells[c] : cells[c] + pad;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  line(header_);
  for (const auto& row : rows_) line(row);
  return out;
}

std::string FormatPercent(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  return Printf("%.2f%%", fraction * 100);
}

std::string FormatNanoseconds(double ns) {
  if (!std::isfinite(ns)) return "-";
  if (ns < 1e3) return Printf("%.0fns", ns);
  if (ns < 1e6) return Printf("%.1fus", ns / 1e3);
  if (ns < 1e9) return Printf("%.2fms", ns / 1e6);
  return Printf("%.2fs", ns / 1e9);
}

std::string FormatWallTime(std::int64_t unix_ns) {
  if (unix_ns <= 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  if (::gmtime_r(&seconds, &tm) == nullptr) return "-";
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

std::string FormatSeconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  if (seconds < 60) {
    return seconds == std::floor(seconds) ? Printf("%.0f s", seconds) : Printf("%.1f s", seconds);
  }
  const auto total = static_cast<long long>(seconds);
  char buf[48];
  if (total < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", total / 60, total % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm%02llds", total / 3600, total / 60 % 60,
                  total % 60);
  }
  return buf;
}

}  // namespace hostmesh::ctl
