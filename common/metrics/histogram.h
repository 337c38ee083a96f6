// A distribution over fixed buckets (probe latency, processing delay).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/metrics/snapshot.h"

namespace hostmesh::metrics {

class Histogram {
 public:
  // bounds: finite, strictly ascending upper bounds (see buckets.h); throws
  // std::invalid_argument otherwise.
  explicit Histogram(std::vector<double> bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Lands in the first bucket whose bound is >= v (`le` is inclusive). NaN
  // counts in +Inf and poisons the sum, as in the Prometheus Go client.
  void Observe(double v);

  std::span<const double> bounds() const { return bounds_; }

  // Counts and sum are read one by one: a scrape racing Observe may see the
  // sum a step ahead of or behind the counts, never a torn count.
  void SnapshotInto(SeriesSnapshot& out) const;

 private:
  std::vector<double> bounds_;
  // Per-bucket (not cumulative) counts, bounds_.size() + 1 with +Inf last.
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

}  // namespace hostmesh::metrics
