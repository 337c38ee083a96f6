// What the analyzer loop hands the evidence writer after a judged window, for
// one incident: plain data, so the writer needs nothing of the analysis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/evidence/evidence_targets.h"
#include "hostmesh/v1/evidence.pb.h"

namespace hostmesh::analyzer::evidence {

// A 5-tuple to follow, of a link or switch group.
struct FollowedTuple {
  std::uint32_t group = 0;  // index into EvidenceEvent::targets
  std::string agent_id;
  std::uint32_t src_nic = 0;
  std::uint32_t dst_nic = 0;
  std::uint32_t src_port = 0;
  std::vector<std::uint32_t> links;
};

struct EvidenceEvent {
  std::uint64_t incident_id = 0;
  std::string kind;  // analysis::IncidentKindName
  std::string summary;
  std::int64_t opened_ns = 0;
  std::optional<v1::evidence::WindowVerdict> verdict;  // the window found it
  // The first capture: what to follow (ignored once the header has groups).
  std::vector<Target> targets;
  std::vector<std::string> target_agents;  // parallel to targets: RNIC and host targets' agent
  std::vector<FollowedTuple> tuples;
  bool tuples_capped = false;
  // Probes sent in [capture_from_ns, capture_to_ns), less what earlier
  // captures wrote; none when equal.
  std::int64_t capture_from_ns = 0;
  std::int64_t capture_to_ns = 0;
  std::vector<std::string> counter_agents;        // NIC counters read over the capture
  std::vector<std::string> flight_record_agents;  // asked for their flight recorder
  bool closed = false;                            // resolved: its header leaves the writer's cache
};

}  // namespace hostmesh::analyzer::evidence
