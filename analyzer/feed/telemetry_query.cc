#include "analyzer/feed/telemetry_query.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "analyzer/telemetry/telemetry_rollup.h"

namespace hostmesh::analyzer::app {
namespace {

// Rolls up what `scan` visits, NIC names from the stored Hellos: one Hello
// read per (agent, boot) in the range, not one per record.
template <typename Scan>
api::TelemetryAnswer Roll(const store::Store& store, telemetry::RollupFilter filter, Scan scan) {
  std::map<std::pair<std::string, std::uint64_t>, std::optional<v1::AgentHello>> hellos;
  const auto namer = [&](std::string_view agent, std::uint64_t boot,
                         std::uint32_t nic) -> std::optional<std::string> {
    auto [it, added] = hellos.try_emplace({std::string(agent), boot});
    if (added) it->second = store.GetHello(agent, boot);
    if (!it->second) return std::nullopt;
    for (const v1::Nic& n : it->second->nics()) {
      if (n.id() == nic) return n.name();
    }
    return std::nullopt;
  };
  telemetry::TelemetryRollup rollup(std::move(filter), namer);
  const store::StoreStatus status = scan([&](const store::StoredTelemetry& s) {
    rollup.Add(s.agent_id, s.boot_id, *s.telemetry);
    return true;
  });
  api::TelemetryAnswer answer;
  if (!status.ok()) {
    answer.error = status.error;
    return answer;
  }
  answer.rows = rollup.Rows();
  return answer;
}

WallTime At(std::int64_t ns) {
  return WallTime{std::chrono::nanoseconds{ns}};
}

}  // namespace

api::TelemetryAnswer QueryTelemetry(const store::Store& store, const api::TelemetryQuery& query) {
  const auto scan = [&](const auto& visit) {
    if (!query.agent_id.empty()) {
      return store.ScanTelemetryOf(At(query.from_ns), At(query.to_ns), {query.agent_id}, visit);
    }
    return store.ScanTelemetry(At(query.from_ns), At(query.to_ns), visit);
  };
  api::TelemetryAnswer answer = Roll(store, {query.agent_id, query.nic}, scan);
  if (answer.rows.size() > query.limit) {
    answer.rows.resize(query.limit);
    answer.truncated = true;
  }
  return answer;
}

api::TelemetryAnswer QueryAgentsTelemetry(const store::Store& store, std::int64_t from_ns,
                                          std::int64_t to_ns,
                                          const std::vector<std::string>& agents) {
  if (agents.empty()) return {};
  return Roll(store, {}, [&](const auto& visit) {
    return store.ScanTelemetryOf(At(from_ns), At(to_ns), agents, visit);
  });
}

}  // namespace hostmesh::analyzer::app
