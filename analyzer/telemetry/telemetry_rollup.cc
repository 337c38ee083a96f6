#include "analyzer/telemetry/telemetry_rollup.h"

namespace hostmesh::analyzer::telemetry {

TelemetryRollup::TelemetryRollup(RollupFilter filter, NicNamer namer)
    : filter_(std::move(filter)), namer_(std::move(namer)) {}

void TelemetryRollup::Add(std::string_view agent_id, std::uint64_t boot_id,
                          const v1::NicTelemetry& sample) {
  if (!filter_.agent_id.empty() && agent_id != filter_.agent_id) return;
  std::optional<std::string> name = namer_ ? namer_(agent_id, boot_id, sample.nic()) : std::nullopt;
  std::string nic = name ? std::move(*name) : "nic" + std::to_string(sample.nic());
  if (!filter_.nic.empty() && nic != filter_.nic) return;
  rows_[{std::string(agent_id), std::move(nic)}].Add(sample);
}

std::vector<NicTelemetryRow> TelemetryRollup::Rows() const {
  std::vector<NicTelemetryRow> rows;
  rows.reserve(rows_.size());
  for (const auto& [key, totals] : rows_) rows.push_back({key.first, key.second, totals});
  return rows;
}

}  // namespace hostmesh::analyzer::telemetry
