#include "common/metrics/histogram.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/metrics/buckets.h"

namespace hostmesh::metrics {

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)) {
  ValidateBucketBounds(bounds_);
  counts_ = std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1);
}

void Histogram::Observe(double v) {
  // lower_bound finds the first bound >= v; NaN compares false everywhere and
  // would land in the first bucket, so it is sent to +Inf explicitly.
  const std::size_t bucket =
      std::isnan(v) ? bounds_.size()
                    : static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) -
                                               bounds_.begin());
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

void Histogram::SnapshotInto(SeriesSnapshot& out) const {
  out.cumulative_counts.resize(bounds_.size() + 1);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    total += counts_[i].load(std::memory_order_relaxed);
    out.cumulative_counts[i] = total;
  }
  out.sum = sum_.load(std::memory_order_relaxed);
}

}  // namespace hostmesh::metrics
