#include "common/base/clock.h"

#include <stdexcept>
#include <string>

namespace hostmesh {

MonoTime SystemClock::MonotonicNow() const {
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now());
}

WallTime SystemClock::RealtimeNow() const {
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
}

VirtualClock::VirtualClock(MonoTime start, WallTime wall_start)
    : mono_ns_(start.time_since_epoch().count()),
      wall_offset_ns_(wall_start.time_since_epoch().count() - start.time_since_epoch().count()) {}

MonoTime VirtualClock::MonotonicNow() const {
  return MonoTime{std::chrono::nanoseconds{mono_ns_.load(std::memory_order_acquire)}};
}

WallTime VirtualClock::RealtimeNow() const {
  const std::int64_t mono = mono_ns_.load(std::memory_order_acquire);
  return WallTime{std::chrono::nanoseconds{mono + wall_offset_ns_.load(std::memory_order_acquire)}};
}

void VirtualClock::Advance(std::chrono::nanoseconds by) {
  if (by.count() < 0) {
    throw std::invalid_argument("VirtualClock::Advance: negative step of " +
                                std::to_string(by.count()) + "ns");
  }
  mono_ns_.fetch_add(by.count(), std::memory_order_acq_rel);
}

void VirtualClock::AdvanceTo(MonoTime to) {
  const std::int64_t target = to.time_since_epoch().count();
  std::int64_t current = mono_ns_.load(std::memory_order_acquire);
  // A loop rather than a plain store so a concurrent Advance is never undone.
  while (current <= target) {
    if (mono_ns_.compare_exchange_weak(current, target, std::memory_order_acq_rel)) return;
  }
  throw std::invalid_argument("VirtualClock::AdvanceTo: target is " +
                              std::to_string(current - target) + "ns in the past");
}

void VirtualClock::SetRealtime(WallTime to) {
  // Racing with Advance can misplace the step by that Advance's amount; tests
  // that step the wall clock do so from one thread.
  wall_offset_ns_.store(to.time_since_epoch().count() - mono_ns_.load(std::memory_order_acquire),
                        std::memory_order_release);
}

}  // namespace hostmesh
