#pragma once

// Maps a NIC's free-running clock (raw completion-timestamp ticks) into the
// host's clock. Pure: it only sees samples, never a device, so it is tested
// with synthetic clocks.
//
// A sample is a raw NIC clock read (ibv_query_rt_values_ex) bracketed by two
// host clock reads. The NIC read happened somewhere inside the bracket, so the
// bracket's midpoint is the estimate and half its width the uncertainty;
// preemption or a slow PCIe read widens a bracket, hence only the narrowest
// ones of a sliding window are fitted. The fit is least squares of host time
// on NIC ticks (offset and drift), redone after every sample.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

namespace hostmesh::agent::verbs {

struct ClockFitOptions {
  std::uint64_t nic_clock_khz = 0;  // ibv_device_attr_ex::hca_core_clock; must be > 0
  // ibv_device_attr_ex::completion_timestamp_mask: the counter counts modulo
  // mask + 1. 0 or all ones: a full 64-bit counter that never wraps in practice.
  std::uint64_t counter_mask = 0;
  std::size_t window = 64;       // most recent samples kept
  std::size_t fit_samples = 16;  // of those, the narrowest brackets that are fitted
  // Below this host-time span of the fitted samples the drift is not
  // observable and the nominal frequency is used as the slope.
  std::int64_t min_span_for_drift_ns = 100'000'000;
};

struct ClockSample {
  std::int64_t host_before_ns = 0;
  std::uint64_t nic_raw = 0;
  std::int64_t host_after_ns = 0;
};

class ClockFit {
 public:
  explicit ClockFit(ClockFitOptions options);

  // Adds a sample and refits. Returns false (and keeps the old fit) for a
  // bracket that is inverted or a host clock that went backwards, both signs
  // of a stepped host clock rather than of the NIC.
  bool AddSample(const ClockSample& sample);

  // Host time of a raw NIC timestamp, or nullopt before the first sample.
  // The raw value is unwrapped relative to the newest sample, so it must lie
  // within half a counter period of it (the caller samples often enough).
  std::optional<std::int64_t> ToHostNs(std::uint64_t nic_raw) const;

  bool ready() const { return fit_.has_value(); }
  std::size_t sample_count() const { return samples_.size(); }
  // Largest |residual| of the fitted midpoints, ns.
  double residual_ns() const { return fit_ ? fit_->max_residual_ns : 0; }
  // Largest |residual| + half bracket width of the fitted samples, ns: the
  // error bound exported with the mapped timestamps (0 before the first fit).
  std::int64_t error_bound_ns() const { return fit_ ? fit_->error_bound_ns : 0; }
  // Fitted NIC frequency relative to nominal, parts per million.
  double drift_ppm() const;

  // Half the counter's wrap period in ns at the nominal frequency; nullopt for
  // a counter that does not wrap. Timestamps are unwrapped against the newest
  // sample, so samples must come more often than this.
  std::optional<std::int64_t> half_wrap_period_ns() const;

 private:
  struct Stored {
    std::uint64_t ticks;  // unwrapped NIC counter
    std::int64_t mid_ns;
    std::int64_t width_ns;
  };
  struct Fit {
    std::uint64_t ref_ticks;
    std::int64_t ref_ns;
    double intercept_ns;  // host time at ref_ticks, relative to ref_ns
    double ns_per_tick;
    double max_residual_ns;
    std::int64_t error_bound_ns;
  };

  std::uint64_t Unwrap(std::uint64_t raw, std::int64_t mid_ns) const;
  void Refit();
  bool wraps() const;
  double nominal_ns_per_tick() const;

  ClockFitOptions options_;
  std::deque<Stored> samples_;  // oldest first
  std::uint64_t last_raw_ = 0;
  std::optional<Fit> fit_;
};

}  // namespace hostmesh::agent::verbs
