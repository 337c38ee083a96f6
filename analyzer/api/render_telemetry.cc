#include "analyzer/api/render_telemetry.h"

#include "analyzer/api/json_values.h"
#include "analyzer/api/render_fields.h"

namespace hostmesh::analyzer::api {
namespace {

// Only the priorities that were read, keyed by priority ("3": 500).
Json PauseJson(
    const std::array<std::optional<std::uint64_t>, telemetry::kPfcPriorities>& counters) {
  Json j = Json::object();
  for (std::size_t p = 0; p < counters.size(); ++p) {
    if (counters[p]) j[std::to_string(p)] = *counters[p];
  }
  return j;
}

Json PcieJson(const std::optional<telemetry::PcieLinkState>& pcie) {
  if (!pcie) return nullptr;
  Json j = Json::object();
  j["current_width"] = pcie->current_width;
  j["max_width"] = pcie->max_width;
  j["current_speed_gts"] = JsonNumber(pcie->current_speed_mts / 1000.0);
  j["max_speed_gts"] = JsonNumber(pcie->max_speed_mts / 1000.0);
  j["downgraded"] = pcie->Downgraded();
  return j;
}

}  // namespace

Json NicTotalsJson(const telemetry::NicCounterTotals& t) {
  Json n = Json::object();
  n["samples"] = t.samples;
  n["start_ns"] = t.start_ns;
  n["end_ns"] = t.end_ns;
  Json& counters = n["counters"] = Json::object();
  for (const auto& [counter, delta] : t.deltas) counters[telemetry::CounterName(counter)] = delta;
  n["pfc_pause_received"] = PauseJson(t.rx_pfc_pause);
  n["pfc_pause_sent"] = PauseJson(t.tx_pfc_pause);
  n["port_state"] = t.port_state;
  n["phys_state"] = t.phys_state;
  n["carrier"] = telemetry::CarrierName(t.carrier);
  n["pcie"] = PcieJson(t.pcie);
  n["read_failures"] = t.read_failures;
  n["counter_resets"] = t.counter_resets;
  return n;
}

std::string RenderTelemetry(const TelemetryQuery& query, const TelemetryAnswer& answer) {
  Json j = Json::object();
  j["from_ns"] = query.from_ns;
  j["to_ns"] = query.to_ns;
  j["count"] = answer.rows.size();
  j["truncated"] = answer.truncated;
  Json& nics = j["nics"] = Json::array();
  for (const telemetry::NicTelemetryRow& row : answer.rows) {
    Json& n = nics.emplace_back(Json::object());
    n["agent_id"] = row.agent_id;
    n["nic"] = row.nic;
    n.update(NicTotalsJson(row.totals));
  }
  return DumpJson(j);
}

}  // namespace hostmesh::analyzer::api
