#pragma once

// When each local NIC probes whom, from which port. Pure: the I/O loop sleeps
// until NextDue(), then calls PopDue(now) and sends what it returns.
//
// Every NIC sends once per `interval` on average. Each gap is interval x (1 + u),
// u uniform in [-jitter_fraction, +jitter_fraction], measured from the previous
// due time (not from when the loop got round to it), so loop latency does not
// lower the rate and the mean rate is exact. The jitter is a random walk: two
// hosts that start in step drift apart within seconds, so a fleet does not
// probe in lockstep. Each NIC starts at a random phase within one interval.
//
// Coalescing: with `coalesce_window` W > 0, a turn also sends every probe due
// within W after `now`, early. The loop then wakes once per round for all NICs
// instead of once per NIC (8 NICs: 8x fewer wake-ups, each cache-cold and
// costing more than the probe itself), while each NIC's due times, and so its
// mean rate and jitter, stay as they were. W = interval sends one round per wake.
//
// A loop that falls more than an interval behind (a stall, a suspended VM)
// gets one probe per NIC and the schedule restarts from `now`: the missed
// slots are counted, not sent in a burst that would look like congestion.

#include <chrono>
#include <cstdint>
#include <vector>

#include "agent/core/port_pool.h"
#include "agent/core/probe_types.h"
#include "agent/core/rng.h"
#include "common/base/clock.h"
#include "common/net/roce.h"

namespace hostmesh::agent {

struct SchedulerOptions {
  std::uint32_t num_nics = 0;
  std::chrono::nanoseconds interval = std::chrono::milliseconds{100};
  double jitter_fraction = 0.05;  // in [0, 0.5]
  std::uint16_t dst_port = net::kRoceV2Port;
  PortPoolOptions ports;
  // Per NIC (index = NicId; missing or empty: ports.allowed_ports): the source
  // ports the transport can send from, from OpenResult::source_ports.
  std::vector<std::vector<std::uint16_t>> nic_allowed_ports{};
  std::chrono::nanoseconds coalesce_window{0};  // in [0, interval]
};

class Scheduler {
 public:
  // Throws std::invalid_argument on options no schedule can satisfy (startup only).
  // With fewer than two NICs nobody has a peer and nothing is ever due.
  Scheduler(const SchedulerOptions& options, MonoTime start, std::uint64_t seed);

  // The earliest time some NIC is due; MonoTime::max() when none will ever be.
  MonoTime NextDue() const;

  // The probes due by `now`, oldest first, at most one per NIC. Also rotates
  // the port pools.
  std::vector<ProbeOrder> PopDue(MonoTime now);
  // Same, appending to `out` (lets the loop reuse one vector).
  void PopDue(MonoTime now, std::vector<ProbeOrder>& out);

  // The transport reopened `nic` and now offers these source ports (empty:
  // any): when they differ from the pool's, the NIC gets a fresh pool over
  // them from `now` (its coverage history starts over) and true is returned.
  // Throws std::invalid_argument like the constructor for ports no pool can use.
  bool SetAllowedPorts(NicId nic, std::vector<std::uint16_t> ports, MonoTime now);

  // Self-protection: every NIC now probes at `fraction` (in (0, 1]) of the
  // configured rate, its gaps interval / fraction with the same relative
  // jitter. A NIC due later than one new gap from `now` (the rate went up)
  // is due at a random phase within it, so NICs stay spread; an earlier due
  // stands. Throws std::invalid_argument outside (0, 1].
  void SetRateFraction(double fraction, MonoTime now);
  double rate_fraction() const { return rate_fraction_; }
  // The gap between two probes of one NIC at the current rate.
  std::chrono::nanoseconds interval() const { return interval_; }

  std::uint32_t num_nics() const { return static_cast<std::uint32_t>(nics_.size()); }
  const PortPool& pool(NicId nic) const { return nics_.at(nic).pool; }
  // Grows whenever some pool may have changed (a rotation was due, or a new
  // pool): who follows the pools compares it instead of every generation.
  std::uint64_t pool_changes() const { return pool_changes_; }
  // Probes sent so far by `nic` (its last sequence number).
  std::uint64_t orders(NicId nic) const { return nics_.at(nic).last_sequence; }
  // Slots given up because the loop ran more than an interval late.
  std::uint64_t skipped_slots(NicId nic) const { return nics_.at(nic).skipped_slots; }

 private:
  struct NicState {
    NicState(PortPool p, std::uint64_t seed) : pool(std::move(p)), rng(seed) {}
    PortPool pool;
    Rng rng;
    MonoTime due;
    std::uint64_t last_sequence = 0;
    std::uint64_t skipped_slots = 0;
  };

  std::chrono::nanoseconds JitteredInterval(Rng& rng) const;

  SchedulerOptions options_;
  double rate_fraction_ = 1.0;
  std::chrono::nanoseconds interval_;     // options_.interval / rate_fraction_
  std::chrono::nanoseconds jitter_span_;  // largest deviation of one gap
  std::vector<NicState> nics_;
  std::uint64_t pool_changes_ = 0;
};

}  // namespace hostmesh::agent
