#include "analyzer/main/telemetry_query.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "analyzer/telemetry/telemetry_rollup.h"

namespace hostmesh::analyzer::app {

api::TelemetryAnswer QueryTelemetry(const store::Store& store, const api::TelemetryQuery& query) {
  // One Hello read per (agent, boot) in the range, not one per record.
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
  telemetry::TelemetryRollup rollup({query.agent_id, query.nic}, namer);
  const store::StoreStatus status = store.ScanTelemetry(
      WallTime{std::chrono::nanoseconds{query.from_ns}},
      WallTime{std::chrono::nanoseconds{query.to_ns}}, [&](const store::StoredTelemetry& s) {
        rollup.Add(s.agent_id, s.boot_id, *s.telemetry);
        return true;
      });
  api::TelemetryAnswer answer;
  if (!status.ok()) {
    answer.error = status.error;
    return answer;
  }
  answer.rows = rollup.Rows();
  if (answer.rows.size() > query.limit) {
    answer.rows.resize(query.limit);
    answer.truncated = true;
  }
  return answer;
}

}  // namespace hostmesh::analyzer::app
