#pragma once

// Groups stored NIC telemetry by (agent, NIC name) and sums it: the NIC name
// comes from the agent's Hello of that boot, so a NIC keeps one row across
// agent restarts (whose NIC ids may differ). Pure: the caller scans the store
// and resolves names.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/telemetry/nic_counter_totals.h"

namespace hostmesh::analyzer::telemetry {

struct NicTelemetryRow {
  std::string agent_id;
  std::string nic;  // the agent's NIC name, or "nic<id>" when its Hello is unknown
  NicCounterTotals totals;
};

struct RollupFilter {
  std::string agent_id;  // empty: every agent
  std::string nic;       // empty: every NIC
};

class TelemetryRollup {
 public:
  // The name of NIC `nic` of (agent, boot); nullopt when unknown.
  using NicNamer = std::function<std::optional<std::string>(std::string_view agent,
                                                            std::uint64_t boot, std::uint32_t nic)>;

  TelemetryRollup(RollupFilter filter, NicNamer namer);

  void Add(std::string_view agent_id, std::uint64_t boot_id, const v1::NicTelemetry& sample);
  // By agent, then NIC name.
  std::vector<NicTelemetryRow> Rows() const;

 private:
  RollupFilter filter_;
  NicNamer namer_;
  std::map<std::pair<std::string, std::string>, NicCounterTotals> rows_;
};

}  // namespace hostmesh::analyzer::telemetry
