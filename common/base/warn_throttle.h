// How often a degraded mode is warned of: a slowloris or a scanner can cause
// thousands of refusals a second, and one log line per refusal would flood
// the journal. Events are counted; a warning says how many came since the
// last one, at most once per period, and a pending tail is flushed by the
// next Flush once the period is over. Pure: time is passed in.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "common/base/clock.h"

namespace hostmesh {

class WarnThrottle {
 public:
  explicit WarnThrottle(std::chrono::nanoseconds every) : every_(every) {}

  // `n` events at `now`: the number of events to warn of now (these
  // included), or nullopt when a warning went out less than a period ago.
  std::optional<std::uint64_t> Note(MonoTime now, std::uint64_t n = 1) {
    pending_ += n;
    return Flush(now);
  }

  // The events not yet warned of, when a period has passed since the last
  // warning; nullopt otherwise or when there are none.
  std::optional<std::uint64_t> Flush(MonoTime now) {
    if (pending_ == 0) return std::nullopt;
    if (last_ && now < *last_ + every_) return std::nullopt;
    last_ = now;
    const std::uint64_t n = pending_;
    pending_ = 0;
    return n;
  }

 private:
  std::chrono::nanoseconds every_;
  std::uint64_t pending_ = 0;
  std::optional<MonoTime> last_;
};

}  // namespace hostmesh
