#include "analyzer/evidence/probe_budget.h"

#include <unordered_map>

namespace hostmesh::analyzer::evidence {

std::uint64_t EncodedBytes(const v1::evidence::Probe& probe) {
  return probe.ByteSizeLong() + 2;  // tag, and a length below 128
}

BudgetOutcome FitToBudget(std::vector<v1::evidence::Probe>& probes, std::uint64_t budget) {
  BudgetOutcome out;
  std::uint64_t timeouts = 0;
  std::uint64_t successes = 0;
  for (const v1::evidence::Probe& p : probes) {
    (p.timeout() ? timeouts : successes) += EncodedBytes(p);
  }
  if (timeouts + successes <= budget) {
    out.bytes = timeouts + successes;
    return out;
  }
  std::vector<v1::evidence::Probe> kept;
  if (timeouts >= budget) {
    // Even the timeouts overflow: the earliest are kept (the onset), no success.
    for (v1::evidence::Probe& p : probes) {
      const std::uint64_t b = EncodedBytes(p);
      if (p.timeout() && out.bytes + b <= budget) {
        out.bytes += b;
        kept.push_back(std::move(p));
      } else {
        ++out.over_budget;
      }
    }
    out.every = 0;  // none kept
    probes = std::move(kept);
    return out;
  }
  // Every k-th success per 5-tuple, with k the smallest that fits on average.
  const std::uint64_t room = budget - timeouts;
  out.every = static_cast<std::uint32_t>((successes + room - 1) / room);
  std::unordered_map<std::uint32_t, std::uint32_t> seen;  // tuple -> successes so far
  for (v1::evidence::Probe& p : probes) {
    const std::uint64_t b = EncodedBytes(p);
    if (!p.timeout() && seen[p.tuple()]++ % out.every != 0) {
      ++out.thinned;
      continue;
    }
    if (out.bytes + b > budget) {  // the average was beaten locally: stop at the budget
      ++(p.timeout() ? out.over_budget : out.thinned);
      continue;
    }
    out.bytes += b;
    kept.push_back(std::move(p));
  }
  probes = std::move(kept);
  return out;
}

}  // namespace hostmesh::analyzer::evidence
