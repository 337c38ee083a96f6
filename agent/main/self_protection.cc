#include "agent/main/self_protection.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/base/logging.h"
#include "common/base/upload_limits.h"

namespace hostmesh::agent::app {
namespace {

std::shared_ptr<spdlog::logger> Log() {
  static const auto log = GetLogger("protect");
  return log;
}

using protect::kSignalNames;

protect::SignalMask WatchedOf(const ProtectConfig& config) {
  protect::SignalMask watched{};
  for (std::size_t i = 0; i < kSignalNames.size(); ++i) {
    watched[i] = std::find(config.signals.begin(), config.signals.end(), kSignalNames[i]) !=
                 config.signals.end();
  }
  return watched;
}

}  // namespace

SelfProtection::SelfProtection(const ProtectConfig& config, Scheduler& scheduler,
                               const Clock& clock, metrics::Registry& registry, StateSink sink)
    : config_(config),
      scheduler_(scheduler),
      clock_(clock),
      sink_(std::move(sink)),
      reader_(config.root, WatchedOf(config)),
      governor_(config.governor),
      next_sample_(clock.MonotonicNow()) {
  for (auto& p : pressure_) p.store(std::numeric_limits<double>::quiet_NaN());
  state_.set_rate_fraction(1.0);
  state_.set_since_ns(clock.RealtimeNow().time_since_epoch().count());
  if (sink_) sink_(state_);
  const std::string signals = reader_.Describe();
  if (signals.empty()) {
    Log()->warn(
        "self-protection is blind: no PSI under {}/proc/pressure and no cgroup of its "
        "own; the probe rate stays as configured under any load",
        config.root == "/" ? "" : config.root);
  } else {
    Log()->info("self-protection: watching {}", signals);
  }

  registry.AddCallbackGauge("hostmesh_agent_probe_rate_fraction",
                            "The probe rate as a fraction of the configured one: 1, or less while "
                            "self-protection sheds load under host pressure.",
                            [this] { return fraction_.load(); });
  registry.AddCallbackGauge("hostmesh_agent_shedding_step",
                            "Self-protection's step: 0 at the configured rate, higher under "
                            "pressure (protect.steps).",
                            [this] { return static_cast<double>(step_.load()); });
  registry.AddCallbackFamily(
      metrics::MetricType::kCounter, "hostmesh_agent_shedding_changes_total",
      "Self-protection's step changes: down (less probing) or up.", {"direction"}, [this] {
        return std::vector<metrics::ScrapedValue>{{{"down"}, static_cast<double>(downs_.load())},
                                                  {{"up"}, static_cast<double>(ups_.load())}};
      });
  registry.AddCallbackFamily(
      metrics::MetricType::kGauge, "hostmesh_agent_pressure_percent",
      "The pressure signals self-protection reads, in percent: host and cgroup PSI (some "
      "avg10), and the share of CPU periods the agent's cgroup hit its limit. Absent ones are "
      "not exported.",
      {"signal"}, [this] {
        std::vector<metrics::ScrapedValue> out;
        for (std::size_t i = 0; i < kSignals; ++i) {
          const double v = pressure_[i].load();
          if (!std::isnan(v)) out.push_back({{kSignalNames[i]}, v});
        }
        return out;
      });
  registry.AddCallbackGauge("hostmesh_agent_pressure_signals",
                            "Watched pressure signals the last sample could read; 0: "
                            "self-protection is blind and the rate stays as configured.",
                            [this] { return static_cast<double>(signals_read_.load()); });
  registry.AddCallbackCounter("hostmesh_agent_pressure_read_errors_total",
                              "Pressure files that were there but failed to read or parse.",
                              [this] { return static_cast<double>(read_errors_.load()); });
}

void SelfProtection::Tick(MonoTime now) {
  if (now < next_sample_) return;
  next_sample_ = now + config_.sample_every;
  const protect::PressureSample sample = reader_.Read(now);
  Publish(sample, now);
  if (const std::optional<protect::StepChange> change = governor_.Observe(sample, now)) {
    Apply(*change, now);
  }
}

void SelfProtection::Publish(const protect::PressureSample& sample, MonoTime now) {
  std::uint64_t read = 0;
  for (std::size_t i = 0; i < kSignals; ++i) {
    pressure_[i].store(sample.at(i).value_or(std::numeric_limits<double>::quiet_NaN()));
    read += sample.at(i) ? 1 : 0;
  }
  signals_read_.store(read);
  const std::uint64_t errors = reader_.read_errors();
  read_errors_.store(errors);
  // Degraded: warned once an hour at most, with the count since the last warning.
  if (errors > errors_warned_ &&
      (!errors_warned_at_ || now - *errors_warned_at_ >= std::chrono::hours{1})) {
    Log()->warn(
        "self-protection: {} pressure file reads failed (last hour); those signals are "
        "left out until they read again",
        errors - errors_warned_);
    errors_warned_ = errors;
    errors_warned_at_ = now;
  }
}

void SelfProtection::Apply(const protect::StepChange& change, MonoTime now) {
  const double from = config_.governor.steps[change.from];
  const double to = config_.governor.steps[change.to];
  scheduler_.SetRateFraction(to, now);
  fraction_.store(to);
  step_.store(change.to);
  (change.to > change.from ? downs_ : ups_).fetch_add(1);
  Log()->warn("self-protection: probe rate {} -> {} of the configured rate ({}{})", from, to,
              change.cause, change.to > change.from ? "" : ", calm");
  state_.set_rate_fraction(to);
  state_.set_since_ns(clock_.RealtimeNow().time_since_epoch().count());
  std::string cause = change.cause;
  if (cause.size() > kMaxSheddingCauseBytes) cause.resize(kMaxSheddingCauseBytes);
  state_.set_cause(std::move(cause));
  // At full rate the state names no signal: nothing sheds.
  state_.set_signal(change.to == 0 ? std::string() : change.signal);
  if (change.to == 0) state_.clear_cause();
  if (sink_) sink_(state_);
}

}  // namespace hostmesh::agent::app
