#include "agent/upload/backoff.h"

#include <algorithm>
#include <random>
#include <utility>

namespace hostmesh::agent::upload {

namespace {

using std::chrono::nanoseconds;

// A draw in [0, 1] scaled onto [low, high], clamped against rounding.
nanoseconds Between(nanoseconds low, nanoseconds high, double unit) {
  const double span = static_cast<double>((high - low).count());
  const auto offset = static_cast<nanoseconds::rep>(span * std::clamp(unit, 0.0, 1.0));
  return std::clamp(low + nanoseconds{offset}, low, high);
}

}  // namespace

UnitRandom MakeUnitRandom(std::uint64_t seed) {
  return [engine = std::mt19937_64{seed}]() mutable {
    // The top 53 bits fill a double's mantissa exactly: uniform in [0, 1).
    return static_cast<double>(engine() >> 11) * 0x1.0p-53;
  };
}

Backoff::Backoff(nanoseconds initial, nanoseconds max, Jitter jitter, UnitRandom random)
    : initial_(std::max(initial, nanoseconds{std::chrono::milliseconds{1}})),
      max_(std::max(max, initial_)),
      jitter_(jitter),
      random_(std::move(random)),
      previous_(initial_) {}

nanoseconds Backoff::Next() {
  const double unit = random_();
  nanoseconds delay{0};
  if (jitter_ == Jitter::kFull) {
    // Double until the cap; stop early so the shift never overflows.
    nanoseconds ceiling = initial_;
    for (std::uint32_t i = 0; i < attempts_ && ceiling < max_; ++i) ceiling *= 2;
    delay = Between(nanoseconds{0}, std::min(ceiling, max_), unit);
  } else {
    const nanoseconds high = previous_ > max_ / 3 ? max_ : previous_ * 3;
    delay = Between(initial_, std::max(high, initial_), unit);
    previous_ = delay;
  }
  if (attempts_ < UINT32_MAX) ++attempts_;
  return delay;
}

void Backoff::Reset() {
  attempts_ = 0;
  previous_ = initial_;
}

}  // namespace hostmesh::agent::upload
