#pragma once

// Counts the series an exposition holds as Prometheus stores them, for the
// series-budget tests of /metrics (DESIGN 3).
#include <prometheus/metric_family.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
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

// "name: series" per family, largest first: what a budget test prints when
// it fails, so the family that grew is in the log.
inline std::string SeriesByFamily(const std::vector<prometheus::MetricFamily>& families) {
  std::vector<std::pair<std::size_t, std::string>> rows;
  for (const auto& f : families) rows.emplace_back(CountSeries({f}), f.name);
  std::sort(rows.rbegin(), rows.rend());
  std::string out;
  for (const auto& [n, name] : rows) out += name + ": " + std::to_string(n) + "\n";
  return out;
}

}  // namespace hostmesh::testing
