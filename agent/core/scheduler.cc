#include "agent/core/scheduler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace hostmesh::agent {
namespace {

const SchedulerOptions& Validated(const SchedulerOptions& options) {
  if (options.interval <= std::chrono::nanoseconds::zero()) {
    throw std::invalid_argument("scheduler: interval must be positive");
  }
  // Beyond one half, consecutive probes of one NIC could swap order.
  if (!(options.jitter_fraction >= 0.0 && options.jitter_fraction <= 0.5)) {
    throw std::invalid_argument("scheduler: jitter_fraction must be in [0, 0.5]");
  }
  // A wider window could send one NIC's next probe in the same turn as this one.
  if (options.coalesce_window < std::chrono::nanoseconds::zero() ||
      options.coalesce_window > options.interval) {
    throw std::invalid_argument("scheduler: coalesce_window must be in [0, interval]");
  }
  return options;
}

}  // namespace

Scheduler::Scheduler(const SchedulerOptions& options, MonoTime start, std::uint64_t seed)
    : options_(Validated(options)),
      interval_(options.interval),
      jitter_span_(static_cast<std::int64_t>(
          std::floor(options.jitter_fraction * static_cast<double>(options.interval.count())))) {
  nics_.reserve(options.num_nics);
  for (NicId nic = 0; nic < options.num_nics; ++nic) {
    // Independent streams per NIC: one NIC's draws never shift another's.
    const std::uint64_t nic_seed = Mix64(seed ^ Mix64(0x5CED0000ULL + nic));
    PortPoolOptions pool = options.ports;
    if (nic < options.nic_allowed_ports.size() && !options.nic_allowed_ports[nic].empty()) {
      pool.allowed_ports = options.nic_allowed_ports[nic];
    }
    nics_.emplace_back(PortPool(pool, options.num_nics, start, Mix64(nic_seed)), nic_seed);
    NicState& state = nics_.back();
    state.due = start + std::chrono::nanoseconds{static_cast<std::int64_t>(
                            state.rng.Below(static_cast<std::uint64_t>(options.interval.count())))};
  }
}

bool Scheduler::SetAllowedPorts(NicId nic, std::vector<std::uint16_t> ports, MonoTime now) {
  NicState& state = nics_.at(nic);
  if (options_.nic_allowed_ports.size() < nics_.size()) {
    options_.nic_allowed_ports.resize(nics_.size());
  }
  std::vector<std::uint16_t>& current = options_.nic_allowed_ports[nic];
  const auto canonical = [](std::vector<std::uint16_t> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  if (canonical(current) == canonical(ports)) return false;
  PortPoolOptions pool = options_.ports;
  if (!ports.empty()) pool.allowed_ports = ports;
  // Seeded from the NIC's own stream: other NICs' draws stay as they were.
  state.pool = PortPool(pool, static_cast<std::uint32_t>(nics_.size()), now, state.rng.Next());
  current = std::move(ports);
  ++pool_changes_;
  return true;
}

void Scheduler::SetRateFraction(double fraction, MonoTime now) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    throw std::invalid_argument("scheduler: rate fraction must be in (0, 1]");
  }
  rate_fraction_ = fraction;
  interval_ = std::chrono::nanoseconds{static_cast<std::int64_t>(
      std::llround(static_cast<double>(options_.interval.count()) / fraction))};
  jitter_span_ = std::chrono::nanoseconds{static_cast<std::int64_t>(
      std::floor(options_.jitter_fraction * static_cast<double>(interval_.count())))};
  for (NicState& state : nics_) {
    if (state.due - now <= interval_) continue;
    state.due = now + std::chrono::nanoseconds{static_cast<std::int64_t>(
                          state.rng.Below(static_cast<std::uint64_t>(interval_.count())))};
  }
}

std::chrono::nanoseconds Scheduler::JitteredInterval(Rng& rng) const {
  const auto span = static_cast<std::uint64_t>(jitter_span_.count());
  const auto offset = static_cast<std::int64_t>(rng.Below(2 * span + 1)) - jitter_span_.count();
  return interval_ + std::chrono::nanoseconds{offset};
}

MonoTime Scheduler::NextDue() const {
  if (nics_.size() < 2) return MonoTime::max();
  MonoTime next = MonoTime::max();
  for (const NicState& state : nics_) next = std::min(next, state.due);
  return next;
}

std::vector<ProbeOrder> Scheduler::PopDue(MonoTime now) {
  std::vector<ProbeOrder> out;
  PopDue(now, out);
  return out;
}

void Scheduler::PopDue(MonoTime now, std::vector<ProbeOrder>& out) {
  if (nics_.size() < 2) return;
  const std::size_t first = out.size();
  const auto peers = static_cast<std::uint64_t>(nics_.size() - 1);
  const MonoTime horizon = now + options_.coalesce_window;
  for (NicId src = 0; src < nics_.size(); ++src) {
    NicState& state = nics_[src];
    // Every pool, due or not, so that what the metrics read is current.
    if (state.pool.AdvanceTo(now)) ++pool_changes_;
    if (state.due > horizon) continue;

    // Uniform over the other NICs: draw among N-1 and step over ourselves.
    auto dst = static_cast<NicId>(state.rng.Below(peers));
    if (dst >= src) ++dst;

    ProbeOrder order;
    order.src = src;
    order.dst = dst;
    order.src_port = state.pool.Draw(dst, state.rng);
    order.dst_port = options_.dst_port;
    order.sequence = ++state.last_sequence;
    order.due = state.due;
    order.pool_generation = state.pool.generation();
    out.push_back(order);

    state.due += JitteredInterval(state.rng);
    if (state.due <= now) {
      state.skipped_slots += static_cast<std::uint64_t>((now - state.due) / interval_) + 1;
      state.due = now + JitteredInterval(state.rng);
    }
  }
  // By due time, then NIC: the order a stable sort would give (orders go in by
  // NIC), without the buffer std::stable_sort allocates on every call.
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
            [](const ProbeOrder& a, const ProbeOrder& b) {
              return std::tie(a.due, a.src) < std::tie(b.due, b.src);
            });
}

}  // namespace hostmesh::agent
