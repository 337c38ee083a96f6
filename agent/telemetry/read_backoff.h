#pragma once

// Exponential back-off of one value (a counter file, a device, a netdev's
// ethtool statistics) whose read failed. On firmware-restricted functions
// every read of some counters logs a kernel access error: a value that
// failed is not read again until its back-off expires. The n-th failure in
// a row waits initial * 2^(n-1), capped at max; a good read forgets it.
// With initial = the sampling period, the next sample tries again after one
// failure, one sample is skipped after two, three after three, and so on.
//
// Pure: time is passed in.

#include <chrono>
#include <cstdint>

#include "common/base/clock.h"

namespace hostmesh::agent::telemetry {

class ReadBackoff {
 public:
  // A `max` below `initial` is raised to `initial`.
  ReadBackoff(std::chrono::nanoseconds initial, std::chrono::nanoseconds max);

  // Whether the value may be read at `now`: always unless a failure's back-off runs.
  bool Due(MonoTime now) const { return failures_ == 0 || now >= retry_at_; }
  // A read at `now` failed: not again before now + the (doubled) delay.
  void Failed(MonoTime now);
  // A read worked: the next failure waits `initial` again.
  void Succeeded();

  std::uint32_t failures() const { return failures_; }       // in a row
  std::chrono::nanoseconds delay() const { return delay_; }  // 0 while not failing
  MonoTime retry_at() const { return retry_at_; }

 private:
  std::chrono::nanoseconds initial_;
  std::chrono::nanoseconds max_;
  std::uint32_t failures_ = 0;
  std::chrono::nanoseconds delay_{0};
  MonoTime retry_at_{};
};

}  // namespace hostmesh::agent::telemetry
