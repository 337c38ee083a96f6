#include "agent/verbs/clock_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace hostmesh::agent::verbs {

ClockFit::ClockFit(ClockFitOptions options) : options_(options) {
  options_.window = std::max<std::size_t>(options_.window, 1);
  options_.fit_samples = std::clamp<std::size_t>(options_.fit_samples, 1, options_.window);
}

bool ClockFit::wraps() const {
  return options_.counter_mask != 0 &&
         options_.counter_mask != std::numeric_limits<std::uint64_t>::max();
}

double ClockFit::nominal_ns_per_tick() const {
  // kHz: 1e6 ns per ms / ticks per ms.
  return options_.nic_clock_khz == 0 ? 1.0 : 1e6 / static_cast<double>(options_.nic_clock_khz);
}

double ClockFit::drift_ppm() const {
  // Frequency, not period: a NIC that runs fast has fewer ns per tick.
  return fit_ ? (nominal_ns_per_tick() / fit_->ns_per_tick - 1.0) * 1e6 : 0;
}

std::optional<std::int64_t> ClockFit::half_wrap_period_ns() const {
  if (!wraps()) return std::nullopt;
  const double half_ticks = (static_cast<double>(options_.counter_mask) + 1.0) / 2;
  const double half_ns = half_ticks * nominal_ns_per_tick();
  // mlx5 reports a 63-bit mask: centuries, and beyond int64 ns. Never wraps.
  if (half_ns >= 9e18) return std::nullopt;
  return static_cast<std::int64_t>(half_ns);
}

std::uint64_t ClockFit::Unwrap(std::uint64_t raw, std::int64_t mid_ns) const {
  const Stored& last = samples_.back();
  if (!wraps()) return last.ticks + (raw - last_raw_);
  const std::uint64_t mask = options_.counter_mask;
  const double period = static_cast<double>(mask) + 1.0;
  const std::uint64_t delta = (raw - last_raw_) & mask;
  // The host clock says roughly how many ticks passed, which tells how many
  // whole wraps the masked delta hides even when samples were far apart.
  const double expected = static_cast<double>(mid_ns - last.mid_ns) / nominal_ns_per_tick();
  const double wraps_missed =
      std::max(0.0, std::round((expected - static_cast<double>(delta)) / period));
  return last.ticks + delta + static_cast<std::uint64_t>(wraps_missed) * (mask + 1);
}

bool ClockFit::AddSample(const ClockSample& sample) {
  if (sample.host_after_ns < sample.host_before_ns) return false;
  const std::int64_t width = sample.host_after_ns - sample.host_before_ns;
  const std::int64_t mid = sample.host_before_ns + width / 2;
  if (!samples_.empty() && mid <= samples_.back().mid_ns) return false;

  std::uint64_t ticks = sample.nic_raw;
  if (!samples_.empty()) {
    ticks = Unwrap(sample.nic_raw, mid);
    // A 64-bit counter that went backwards was reset (NIC reset, firmware
    // update): the old samples describe another clock, so start over.
    if (static_cast<std::int64_t>(ticks - samples_.back().ticks) < 0) {
      samples_.clear();
      ticks = sample.nic_raw;
    }
  }
  samples_.push_back(Stored{ticks, mid, width});
  last_raw_ = sample.nic_raw;
  while (samples_.size() > options_.window) samples_.pop_front();
  Refit();
  return true;
}

void ClockFit::Refit() {
  std::vector<const Stored*> chosen;
  chosen.reserve(samples_.size());
  for (const Stored& s : samples_) chosen.push_back(&s);
  const std::size_t n = std::min(options_.fit_samples, chosen.size());
  // Narrowest first; among equals the newer one, as it describes the clock now.
  std::partial_sort(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(n), chosen.end(),
                    [](const Stored* a, const Stored* b) {
                      return a->width_ns != b->width_ns ? a->width_ns < b->width_ns
                                                        : a->mid_ns > b->mid_ns;
                    });
  chosen.resize(n);

  // Coordinates relative to the newest sample keep the doubles small and exact enough.
  Fit fit{};
  fit.ref_ticks = samples_.back().ticks;
  fit.ref_ns = samples_.back().mid_ns;
  double sx = 0, sy = 0;
  std::int64_t min_mid = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_mid = std::numeric_limits<std::int64_t>::min();
  std::vector<double> xs, ys;
  for (const Stored* s : chosen) {
    xs.push_back(static_cast<double>(static_cast<std::int64_t>(s->ticks - fit.ref_ticks)));
    ys.push_back(static_cast<double>(s->mid_ns - fit.ref_ns));
    sx += xs.back();
    sy += ys.back();
    min_mid = std::min(min_mid, s->mid_ns);
    max_mid = std::max(max_mid, s->mid_ns);
  }
  const double count = static_cast<double>(n);
  const double mx = sx / count, my = sy / count;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxx += (xs[i] - mx) * (xs[i] - mx);
    sxy += (xs[i] - mx) * (ys[i] - my);
  }
  fit.ns_per_tick = (max_mid - min_mid >= options_.min_span_for_drift_ns && sxx > 0)
                        ? sxy / sxx
                        : nominal_ns_per_tick();
  fit.intercept_ns = my - fit.ns_per_tick * mx;

  fit.max_residual_ns = 0;
  double bound = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double residual = std::abs(ys[i] - (fit.intercept_ns + fit.ns_per_tick * xs[i]));
    fit.max_residual_ns = std::max(fit.max_residual_ns, residual);
    bound = std::max(bound, residual + static_cast<double>(chosen[i]->width_ns) / 2);
  }
  fit.error_bound_ns = static_cast<std::int64_t>(std::ceil(bound));
  fit_ = fit;
}

std::optional<std::int64_t> ClockFit::ToHostNs(std::uint64_t nic_raw) const {
  if (!fit_) return std::nullopt;
  std::int64_t delta = 0;  // ticks from the newest sample, either direction
  if (wraps()) {
    const std::uint64_t mask = options_.counter_mask;
    const std::uint64_t forward = (nic_raw - last_raw_) & mask;
    delta = forward > mask / 2 ? -static_cast<std::int64_t>(mask - forward + 1)
                               : static_cast<std::int64_t>(forward);
  } else {
    delta = static_cast<std::int64_t>(nic_raw - last_raw_);
  }
  const auto x = static_cast<double>(
      static_cast<std::int64_t>(samples_.back().ticks - fit_->ref_ticks) + delta);
  return fit_->ref_ns + std::llround(fit_->intercept_ns + fit_->ns_per_tick * x);
}

}  // namespace hostmesh::agent::verbs
