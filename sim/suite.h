#pragma once

// The built-in suite: scenarios whose fault mixes are drawn at random from a
// seed, so a suite is a reproducible sample of the faults operators meet:
// partial and total link loss one way or both, links and NICs going down or
// flapping, lossy NICs (corruption), lossy switches, ACL blackholes, congestion
// latency, slow hosts, under background loss, with agents restarting and hosts
// leaving as noise. About one scenario in five has no fault (false alarms).

#include <cstdint>
#include <vector>

#include "sim/scenario.h"

namespace hostmesh::sim {

struct SuiteOptions {
  topology::FabricShape shape{64, 8, 8, 1, 2, 0};
  int scenarios = 20;
  std::int64_t duration_ns = 300'000'000'000;
  std::uint64_t seed = 1;
  int max_faults = 5;
  int threads = 2;
};

std::vector<Scenario> BuildSuite(const SuiteOptions& options);

}  // namespace hostmesh::sim
