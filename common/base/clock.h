#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace hostmesh {

// Instants on the monotonic timeline (steady_clock's epoch is arbitrary: compare
// and subtract them, never print them as dates).
using MonoTime = std::chrono::time_point<std::chrono::steady_clock, std::chrono::nanoseconds>;
// Wall-clock instants, nanoseconds since the Unix epoch; these may step (NTP).
using WallTime = std::chrono::sys_time<std::chrono::nanoseconds>;

// The one source of time for pure logic (scheduler, tracker, analyzer windows),
// injected so that tests and the simulator run them in virtual time.
class Clock {
 public:
  virtual ~Clock() = default;
  // For intervals, deadlines and timeouts.
  virtual MonoTime MonotonicNow() const = 0;
  // For timestamps that leave the process (probe results, batches, logs).
  virtual WallTime RealtimeNow() const = 0;
};

// The host's clocks: CLOCK_MONOTONIC and CLOCK_REALTIME via std::chrono.
class SystemClock final : public Clock {
 public:
  MonoTime MonotonicNow() const override;
  WallTime RealtimeNow() const override;
};

// Time that moves only when told to. Safe to read and advance from several threads.
class VirtualClock final : public Clock {
 public:
  // Starts at monotonic `start`, with the wall clock at `wall_start`.
  explicit VirtualClock(MonoTime start = MonoTime{}, WallTime wall_start = kDefaultWallStart);

  MonoTime MonotonicNow() const override;
  WallTime RealtimeNow() const override;

  // Moves both clocks forward. Throws std::invalid_argument if `by` is negative:
  // monotonic time never goes back.
  void Advance(std::chrono::nanoseconds by);
  // Moves both clocks forward to monotonic `to`; same rule as Advance.
  void AdvanceTo(MonoTime to);
  // Steps the wall clock only, as NTP may; monotonic time is untouched.
  void SetRealtime(WallTime to);

  // 2024-01-01T00:00:00Z: a fixed, recognizable date so test output is stable.
  static constexpr WallTime kDefaultWallStart{std::chrono::seconds{1704067200}};

 private:
  std::atomic<std::int64_t> mono_ns_;
  // Wall time minus monotonic time, so one atomic add advances both clocks.
  std::atomic<std::int64_t> wall_offset_ns_;
};

}  // namespace hostmesh
