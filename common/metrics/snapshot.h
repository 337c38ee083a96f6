// What a scrape sees: plain values copied out of the live metrics, so the
// text renderer is a pure function that tests can feed by hand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hostmesh::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

// One labelled series of a family.
struct SeriesSnapshot {
  std::vector<std::string> label_values{};  // in the family's label-name order
  double value = 0;                         // counter and gauge
  // Histogram only: cumulative counts, one per bucket bound and a last one for
  // +Inf (which is also the observation count).
  std::vector<std::uint64_t> cumulative_counts{};
  double sum = 0;  // histogram only
};

struct FamilySnapshot {
  std::string name{};
  std::string help{};
  MetricType type = MetricType::kGauge;
  std::vector<std::string> label_names{};
  std::vector<double> bucket_bounds{};  // histogram only: finite, ascending
  std::vector<SeriesSnapshot> series{};
};

}  // namespace hostmesh::metrics
