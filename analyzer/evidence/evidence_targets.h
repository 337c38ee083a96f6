// The components whose probes an incident's evidence keeps: its suspect and,
// beside it for comparison, a few healthy siblings (other uplinks of the same
// switch, other switches of the same tier, other NICs of the same host).
// Pure: from the incident, the fabric map and the window that named it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analyzer/analysis/incidents.h"
#include "analyzer/analysis/types.h"
#include "analyzer/analysis/window_report.h"

namespace hostmesh::analyzer::evidence {

struct Target {
  enum class Kind : std::uint8_t { kLink, kSwitch, kRnic, kHost };
  Kind kind = Kind::kLink;
  std::uint32_t id = 0;     // LinkId, SwitchId or HostId
  analysis::NicId nic = 0;  // kRnic
  bool sibling = false;
  friend bool operator==(const Target&, const Target&) = default;
};
std::string_view TargetKindName(Target::Kind kind);  // "link", "switch", "rnic", "host"

// The suspect first, then up to `siblings` siblings: none blamed in `report`,
// chosen in id order from just after the suspect's (a spread, and the same
// every time for the same fabric).
std::vector<Target> TargetsOf(const analysis::Incident& incident, const analysis::FabricMap& fabric,
                              const analysis::WindowReport& report, std::uint32_t siblings);

}  // namespace hostmesh::analyzer::evidence
