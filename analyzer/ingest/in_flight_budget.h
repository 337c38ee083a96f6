// Bytes of batches read from agents and not yet durable, across every stream:
// what peers can make the analyzer hold at once. Past the limit a stream is
// ended with RESOURCE_EXHAUSTED (the agent keeps its data and retries after
// its backoff) instead of the analyzer growing until it is killed.
#pragma once

#include <atomic>
#include <cstddef>

namespace hostmesh::analyzer::ingest {

class InFlightBudget {
 public:
  explicit InFlightBudget(std::size_t limit_bytes) : limit_(limit_bytes) {}

  // Takes `bytes` when they fit under the limit; false (nothing taken) when not.
  bool TryTake(std::size_t bytes) {
    std::size_t held = held_.load(std::memory_order_relaxed);
    do {
      if (bytes > limit_ || held > limit_ - bytes) return false;
    } while (!held_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
    return true;
  }
  void Give(std::size_t bytes) { held_.fetch_sub(bytes, std::memory_order_relaxed); }

  std::size_t held() const { return held_.load(std::memory_order_relaxed); }
  std::size_t limit() const { return limit_; }

 private:
  const std::size_t limit_;
  std::atomic<std::size_t> held_{0};
};

}  // namespace hostmesh::analyzer::ingest
