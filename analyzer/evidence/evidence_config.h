// What the analyzer keeps of each incident's evidence (first-failure capture,
// docs/analyzer.md "Evidence"): the config file's `evidence` section.
#pragma once

#include <chrono>
#include <cstdint>

namespace hostmesh::analyzer::evidence {

struct EvidenceConfig {
  bool enabled = true;
  // Probes captured from this long before the window that opened the incident
  // (the moment it began is in it: an incident opens one or two windows after
  // its fault starts)...
  std::chrono::nanoseconds before = std::chrono::minutes{2};
  // ...to this long after that window's start. Must be below the raw
  // retention (6 h by default): the probes are read from the store.
  std::chrono::nanoseconds after = std::chrono::minutes{1};
  // Bytes of probes one incident keeps; beyond, successes are thinned in time
  // (every timeout is kept while it fits), and the header says so.
  std::uint64_t incident_bytes = std::uint64_t{4} << 20;
  // All incidents' evidence together; beyond, the oldest incidents' evidence
  // goes first (counted and warned).
  std::uint64_t disk_cap_bytes = std::uint64_t{2} << 30;
  // 5-tuples sampled per suspect (a uniform sample of those whose path
  // crosses it) and per sibling (a quarter of it).
  std::uint32_t max_tuples = 2048;
  // Healthy siblings kept beside a link or switch for comparison.
  std::uint32_t siblings = 3;
  // Hosts whose NIC counters (and flight recorders) an incident keeps.
  std::uint32_t max_hosts = 8;
};

}  // namespace hostmesh::analyzer::evidence
