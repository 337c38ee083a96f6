#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace hostmesh::agent::upload {

// Uniform in [0, 1). Injected so tests pick the draws and the uploader's delays
// replay exactly.
using UnitRandom = std::function<double()>;

// A UnitRandom over a seeded std::mt19937_64 (whose output the standard fixes;
// the conversion to [0, 1) is ours, so it is the same on every library).
UnitRandom MakeUnitRandom(std::uint64_t seed);

enum class Jitter {
  // Uniform in [0, min(max, initial * 2^attempt)]: spreads a fleet the most, but
  // may retry at once.
  kFull,
  // Uniform in [initial, 3 * previous delay], capped at max: never below initial,
  // so a flapping analyzer cannot make an agent spin.
  kDecorrelated,
};

// How long to wait before the next connection attempt: exponential from
// `initial` to `max`, jittered so that a fleet of agents that lost the analyzer at
// the same moment does not reconnect in lockstep.
class Backoff {
 public:
  // A `max` below `initial` is raised to `initial`; an `initial` below 1 ms is
  // raised to 1 ms so the growth is never stuck at zero.
  Backoff(std::chrono::nanoseconds initial, std::chrono::nanoseconds max, Jitter jitter,
          UnitRandom random);

  // The delay before the next attempt; each call counts one failed attempt.
  std::chrono::nanoseconds Next();
  // After a healthy connection: the next failure waits about `initial` again.
  void Reset();

  std::uint32_t attempts() const { return attempts_; }
  std::chrono::nanoseconds initial() const { return initial_; }
  std::chrono::nanoseconds max() const { return max_; }

 private:
  std::chrono::nanoseconds initial_;
  std::chrono::nanoseconds max_;
  Jitter jitter_;
  UnitRandom random_;
  std::uint32_t attempts_ = 0;
  std::chrono::nanoseconds previous_;  // decorrelated jitter grows from the last delay
};

}  // namespace hostmesh::agent::upload
