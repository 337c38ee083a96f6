// A monotonically increasing count (probes sent, timeouts, bytes).
#pragma once

#include <atomic>
#include <cstdint>

#include "common/metrics/snapshot.h"

namespace hostmesh::metrics {

// Integer-valued so the hot path is one relaxed fetch_add; counters that are
// computed as floats (CPU seconds) come from a registry callback instead.
class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  void Inc(std::uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

  void SnapshotInto(SeriesSnapshot& out) const { out.value = static_cast<double>(Value()); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

}  // namespace hostmesh::metrics
