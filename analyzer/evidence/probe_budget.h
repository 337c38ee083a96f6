// Fitting one capture's probes into what is left of an incident's byte
// budget. Timeouts are the evidence, so they are kept first, in time order;
// successes are thinned evenly in time per 5-tuple (every k-th), which keeps
// each 5-tuple's latency over time readable at a lower resolution. Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "hostmesh/v1/evidence.pb.h"

namespace hostmesh::analyzer::evidence {

struct BudgetOutcome {
  std::uint32_t every = 1;        // successes kept 1 in this many
  std::uint64_t thinned = 0;      // successes left out
  std::uint64_t over_budget = 0;  // timeouts (and successes) left out when timeouts alone overflow
  std::uint64_t bytes = 0;        // of the kept probes, as encoded in a part
};

// Keeps what fits in `budget` bytes of `probes` (in send-time order), in place.
BudgetOutcome FitToBudget(std::vector<v1::evidence::Probe>& probes, std::uint64_t budget);

// A probe's bytes inside an EvidencePart (the field's tag and length too).
std::uint64_t EncodedBytes(const v1::evidence::Probe& probe);

}  // namespace hostmesh::analyzer::evidence
