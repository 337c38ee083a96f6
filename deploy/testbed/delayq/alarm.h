// A timerfd that fires close to a deadline despite wake-up latency.
#pragma once

#include <optional>

#include "deploy/testbed/delayq/delay_line.h"

namespace hostmesh::delayq {

class Alarm {
 public:
  Alarm();
  ~Alarm();
  Alarm(const Alarm&) = delete;
  Alarm& operator=(const Alarm&) = delete;

  int fd() const { return fd_; }

  // Arms for `deadline`, early by the learned wake-up latency; disarms on nullopt.
  void Set(std::optional<Clock::time_point> deadline);

  // Call when fd() is readable: learns the wake-up latency and, when the early wake-up was
  // early indeed, spins the remaining few microseconds until the deadline.
  void OnFired();

  // The usual time from an event to this process running again (a moving average).
  Clock::duration typical_latency() const { return typical_; }

 private:
  int fd_;
  std::optional<Clock::time_point> deadline_;
  Clock::time_point armed_for_{};
  Clock::time_point set_at_{};
  Clock::duration lead_{};
  Clock::duration typical_{};
};

}  // namespace hostmesh::delayq
