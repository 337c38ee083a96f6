// A value that goes up and down (queue depth, spool bytes, clock error bound).
#pragma once

#include <atomic>

#include "common/metrics/snapshot.h"

namespace hostmesh::metrics {

class Gauge {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Inc(double d = 1) { value_.fetch_add(d, std::memory_order_relaxed); }
  void Dec(double d = 1) { value_.fetch_sub(d, std::memory_order_relaxed); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

  void SnapshotInto(SeriesSnapshot& out) const { out.value = Value(); }

 private:
  static_assert(std::atomic<double>::is_always_lock_free);
  std::atomic<double> value_{0};
};

}  // namespace hostmesh::metrics
