#include "sim/congestion.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "agent/core/rng.h"

namespace hostmesh::sim {
namespace {

using agent::Mix64;

double Gaussian(std::uint64_t key) {
  // Box-Muller from two uniforms of the key; 1 - u keeps the logarithm finite.
  const double u1 = 1.0 - HashUniform(key);
  const double u2 = HashUniform(Mix64(key ^ 0x5851F42D4C957F2DULL));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

double LogUniform(agent::Rng& rng, double lo, double hi) {
  const double u = static_cast<double>(rng.Next() >> 11) * 0x1.0p-53;
  return lo * std::exp(u * std::log(hi / lo));
}

}  // namespace

double HashUniform(std::uint64_t key) {
  return static_cast<double>(Mix64(key) >> 11) * 0x1.0p-53;
}

double WanderFactor(const QueueModel& m, std::uint64_t queue, std::int64_t t) {
  if (m.sigma <= 0 || m.knot_ns <= 0) return 1.0;
  const std::int64_t k = t / m.knot_ns;
  const double f = static_cast<double>(t - k * m.knot_ns) / static_cast<double>(m.knot_ns);
  const std::uint64_t base = Mix64(queue);
  const double g = (1 - f) * Gaussian(base + static_cast<std::uint64_t>(k)) +
                   f * Gaussian(base + static_cast<std::uint64_t>(k + 1));
  // Between knots g's variance is (1-f)^2 + f^2; dividing by its log-normal
  // mean keeps the level's mean the configured delay at every t.
  const double variance = (1 - f) * (1 - f) + f * f;
  return std::exp(m.sigma * g - m.sigma * m.sigma * variance / 2);
}

std::int64_t QueueWait(const QueueModel& m, double level_ns, std::uint64_t packet) {
  if (level_ns <= 0) return 0;
  if (!m.tail || m.busy <= 0) return static_cast<std::int64_t>(level_ns);
  const double busy = std::min(m.busy, 1.0);
  const double u = HashUniform(packet);
  if (u < 1 - busy) return 0;
  const double v = (u - (1 - busy)) / busy;  // uniform in [0, 1)
  return static_cast<std::int64_t>(-std::log1p(-v) * level_ns / busy);
}

MovingCongestion::MovingCongestion(const Fleet& fleet, const MovingCongestionModel& model,
                                   std::int64_t duration_ns, std::uint64_t seed) {
  const std::size_t directed = 2 * fleet.link_count();
  offsets_.assign(directed + 1, 0);
  const double lo = static_cast<double>(model.min_duration_ns);
  const double hi = static_cast<double>(std::max(model.max_duration_ns, model.min_duration_ns));
  const bool on = model.share > 0 && lo > 0 && model.min_added_ns > 0 && duration_ns > 0;
  // Mean of a log-uniform duration; arrivals at share / mean per link keep
  // `share` of the time congested (Little's law).
  const double mean_duration = hi > lo ? (hi - lo) / std::log(hi / lo) : lo;
  const double rate = on ? std::min(model.share, 1.0) / mean_duration : 0;
  const double added_hi = static_cast<double>(std::max(model.max_added_ns, model.min_added_ns));
  for (std::size_t d = 0; d < directed && on; ++d) {
    agent::Rng rng(Mix64(seed ^ Mix64(0xC0FFEEULL + d)));
    // From one longest episode before the start, so the run opens mid-flow.
    double t = -hi;
    for (;;) {
      t += -std::log(1.0 - HashUniform(rng.Next())) / rate;
      if (t >= static_cast<double>(duration_ns)) break;
      const double length = hi > lo ? LogUniform(rng, lo, hi) : lo;
      const double added = added_hi > static_cast<double>(model.min_added_ns)
                               ? LogUniform(rng, static_cast<double>(model.min_added_ns), added_hi)
                               : added_hi;
      if (t + length > 0) {
        episodes_.push_back(
            {static_cast<std::int64_t>(t), static_cast<std::int64_t>(t + length), added});
      }
    }
    offsets_[d + 1] = static_cast<std::uint32_t>(episodes_.size());
  }
}

double MovingCongestion::LevelAt(LinkId link, bool up, std::int64_t t, std::uint64_t* queue) const {
  const std::size_t d = 2 * static_cast<std::size_t>(link) + (up ? 0 : 1);
  if (d + 1 >= offsets_.size()) return 0;
  double level = 0;
  for (std::uint32_t i = offsets_[d]; i < offsets_[d + 1]; ++i) {
    const Episode& e = episodes_[i];
    if (e.start_ns > t) break;  // sorted by start
    if (t >= e.end_ns) continue;
    if (level == 0 && queue != nullptr) *queue = 0xE915'0DE0'0000'0000ULL + i;
    level += e.added_ns;
  }
  return level;
}

}  // namespace hostmesh::sim
