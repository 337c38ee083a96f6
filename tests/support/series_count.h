#pragma once

// Counts the series an exposition holds as Prometheus stores them, for the
// series-budget tests of /metrics (DESIGN 3).
#include <prometheus/metric_family.h>

#include <cstddef>
#include <vector>

namespace hostmesh::testing {

// A histogram series is its buckets (+Inf included), _sum and _count.
inline std::size_t CountSeries(const std::vector<prometheus::MetricFamily>& families) {
  std::size_t n = 0;
  for (const auto& f : families) {
    for (const auto& m : f.metric) {
      n += f.type == prometheus::MetricType::Histogram ? m.histogram.bucket.size() + 2 : 1;
    }
  }
  return n;
}

}  // namespace hostmesh::testing
