#pragma once

#include "common/base/clock.h"

namespace hostmesh::sim {

// One simulated host's clock: the host's event loop sets it to each event's
// time. Monotonic time is simulation time; the wall clock is a fixed offset
// from it (hosts of one fleet agree on the date, as NTP keeps them).
class HostClock final : public Clock {
 public:
  explicit HostClock(std::int64_t wall_offset_ns) : wall_offset_ns_(wall_offset_ns) {}
  MonoTime MonotonicNow() const override { return now_; }
  WallTime RealtimeNow() const override {
    return WallTime{std::chrono::nanoseconds{now_.time_since_epoch().count() + wall_offset_ns_}};
  }
  void Set(MonoTime t) { now_ = t; }
  std::int64_t ns() const { return now_.time_since_epoch().count(); }

 private:
  std::int64_t wall_offset_ns_;
  MonoTime now_{};
};

inline double ToSeconds(std::int64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

inline MonoTime AtNs(std::int64_t ns) {
  return MonoTime{std::chrono::nanoseconds{ns}};
}

}  // namespace hostmesh::sim
