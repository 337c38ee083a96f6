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
  // Exactly this many faults in every faulty scenario (0: 1 to max_faults).
  int faults = 0;
  // Draw only these kinds, by their usual weights (empty: every kind).
  std::vector<FaultKind> kinds;
  int threads = 2;
  // Each faulty scenario's first fault is of the next kind in turn (kEveryKind),
  // not drawn: a short suite then holds every kind, the diagnosis' eight types
  // first. The other faults, the background and the noise are drawn as usual.
  bool every_kind = false;
};

// The fault kinds in the order `every_kind` takes them: those diagnosis names
// one of the eight types, then the look-alikes.
inline constexpr FaultKind kEveryKind[] = {
    FaultKind::kRnicLoss,      FaultKind::kRnicFlap,       FaultKind::kLinkFlap,
    FaultKind::kMissingRoute,  FaultKind::kBlackhole,      FaultKind::kPfcMisconfig,
    FaultKind::kEcmpCollision, FaultKind::kHostProcessing, FaultKind::kPcieDowngrade,
    FaultKind::kRnicDown,      FaultKind::kLinkLoss,       FaultKind::kLinkDown,
    FaultKind::kSwitchLoss,    FaultKind::kLinkLatency,
};

std::vector<Scenario> BuildSuite(const SuiteOptions& options);

}  // namespace hostmesh::sim
