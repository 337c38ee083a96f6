// A FIFO of packets held for a constant delay: pure, no I/O, driven by the caller's clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

namespace hostmesh::delayq {

using Clock = std::chrono::steady_clock;

class DelayLine {
 public:
  explicit DelayLine(Clock::duration delay) : delay_(delay) {}

  // With one constant delay, deadlines grow in arrival order, so a FIFO is already
  // timer-ordered and no heap is needed.
  void Push(uint32_t packet_id, Clock::time_point arrived) {
    held_.push_back({packet_id, arrived + delay_});
    if (held_.size() > max_held_) max_held_ = held_.size();
  }

  // The id of the newest packet whose deadline has passed; every older packet is due too.
  // Removes them all.
  std::optional<uint32_t> PopDue(Clock::time_point now) {
    std::optional<uint32_t> last;
    while (!held_.empty() && held_.front().deadline <= now) {
      last = held_.front().id;
      lateness_sum_ += now - held_.front().deadline;
      ++released_;
      held_.pop_front();
    }
    return last;
  }

  // Removes everything (shutdown: release, do not drop); the newest id, if any.
  std::optional<uint32_t> PopAll() {
    if (held_.empty()) return std::nullopt;
    uint32_t last = held_.back().id;
    held_.clear();
    return last;
  }

  std::optional<Clock::time_point> NextDeadline() const {
    if (held_.empty()) return std::nullopt;
    return held_.front().deadline;
  }

  size_t size() const { return held_.size(); }
  size_t max_held() const { return max_held_; }
  // Mean time between a packet's deadline and its release: the timer's wake-up latency.
  Clock::duration mean_lateness() const {
    return released_ ? lateness_sum_ / static_cast<int64_t>(released_) : Clock::duration::zero();
  }

 private:
  struct Held {
    uint32_t id;
    Clock::time_point deadline;
  };
  Clock::duration delay_;
  std::deque<Held> held_;
  size_t max_held_ = 0;
  Clock::duration lateness_sum_{};
  uint64_t released_ = 0;
};

}  // namespace hostmesh::delayq
