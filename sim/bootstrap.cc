#include "sim/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "agent/core/rng.h"

namespace hostmesh::sim {
namespace {

// The q-quantile of sorted values, interpolated between neighbours.
double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - static_cast<double>(below));
}

Interval Percentiles(std::vector<double>& values) {
  std::sort(values.begin(), values.end());
  return {Quantile(values, 0.025), Quantile(values, 0.975)};
}

}  // namespace

ScoreIntervals BootstrapIntervals(std::span<const Counts> per_scenario, int rounds,
                                  std::uint64_t seed) {
  ScoreIntervals out;
  out.scenarios = per_scenario.size();
  if (per_scenario.empty() || rounds <= 0) {
    const Counts none;
    out.precision = {none.precision(), none.precision()};
    out.recall = {none.recall(), none.recall()};
    out.f1 = {none.f1(), none.f1()};
    return out;
  }
  agent::Rng rng(seed);
  std::vector<double> precision, recall, f1;
  precision.reserve(static_cast<std::size_t>(rounds));
  recall.reserve(static_cast<std::size_t>(rounds));
  f1.reserve(static_cast<std::size_t>(rounds));
  for (int r = 0; r < rounds; ++r) {
    Counts pool;
    for (std::size_t i = 0; i < per_scenario.size(); ++i) {
      pool += per_scenario[rng.Below(per_scenario.size())];
    }
    precision.push_back(pool.precision());
    recall.push_back(pool.recall());
    f1.push_back(pool.f1());
  }
  out.precision = Percentiles(precision);
  out.recall = Percentiles(recall);
  out.f1 = Percentiles(f1);
  return out;
}

}  // namespace hostmesh::sim
