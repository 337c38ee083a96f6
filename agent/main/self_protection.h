#pragma once

// Self-protection on the probe loop's thread (docs/agent.md#self-protection):
// every protect.sample_every it reads the host's pressure (PressureReader),
// lets the RateGovernor choose the step, sets the scheduler's rate to it,
// warns of each change, and stamps the state on every upload batch so the
// analyzer reads fewer probes as the agent's choice, not as loss. Its
// /metrics read atomics, written here.

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "agent/config/agent_config.h"
#include "agent/core/scheduler.h"
#include "agent/protect/pressure_reader.h"
#include "agent/protect/rate_governor.h"
#include "common/base/clock.h"
#include "common/metrics/registry.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::agent::app {

class SelfProtection {
 public:
  // Called with the state after every change, and once at start.
  using StateSink = std::function<void(const v1::LoadShedding&)>;

  // `scheduler` must outlive this. Registers its metrics in `registry`.
  SelfProtection(const ProtectConfig& config, Scheduler& scheduler, const Clock& clock,
                 metrics::Registry& registry, StateSink sink);

  // Samples when a period has passed since the last sample (cheap otherwise).
  void Tick(MonoTime now);
  double fraction() const { return governor_.fraction(); }

 private:
  void Apply(const protect::StepChange& change, MonoTime now);
  void Publish(const protect::PressureSample& sample, MonoTime now);

  ProtectConfig config_;
  Scheduler& scheduler_;
  const Clock& clock_;
  StateSink sink_;
  protect::PressureReader reader_;
  protect::RateGovernor governor_;
  MonoTime next_sample_;
  v1::LoadShedding state_;
  std::uint64_t errors_warned_ = 0;
  std::optional<MonoTime> errors_warned_at_;

  // For /metrics (read on the scrape thread).
  static constexpr std::size_t kSignals = protect::kSignalNames.size();
  std::atomic<double> fraction_{1.0};
  std::atomic<std::uint64_t> step_{0};
  std::atomic<std::uint64_t> downs_{0};
  std::atomic<std::uint64_t> ups_{0};
  std::atomic<std::uint64_t> read_errors_{0};
  std::atomic<std::uint64_t> signals_read_{0};            // watched signals the last sample had
  std::array<std::atomic<double>, kSignals> pressure_{};  // NaN: signal absent
};

}  // namespace hostmesh::agent::app
