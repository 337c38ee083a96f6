#pragma once

// 95% confidence intervals of a suite's precision, recall and F1: a
// percentile bootstrap over its scenarios. The scenario is the unit that was
// drawn at random (its faults, their rates and places), and windows within
// one scenario are not independent (a fault named in one window is named in
// the next), so scenarios, not windows, are resampled. Deterministic: the
// same per-scenario counts give the same intervals.

#include <cstdint>
#include <span>

#include "sim/scorecard.h"

namespace hostmesh::sim {

struct Interval {
  double lo = 0, hi = 0;
};
struct ScoreIntervals {
  Interval precision, recall, f1;
  std::size_t scenarios = 0;  // resampled from
};

inline constexpr int kBootstrapRounds = 2000;

// Each round draws as many scenarios as there are, with replacement, pools
// their counts and scores the pool; the intervals are the rounds' 2.5th and
// 97.5th percentiles. No scenarios: all intervals [1, 1] as Counts scores
// an empty pool.
ScoreIntervals BootstrapIntervals(std::span<const Counts> per_scenario,
                                  int rounds = kBootstrapRounds, std::uint64_t seed = 1);

}  // namespace hostmesh::sim
