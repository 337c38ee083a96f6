#include "agent/protect/rate_governor.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace hostmesh::agent::protect {
namespace {

struct Worst {
  double share = 0;
  std::string cause;
  std::string signal;
};

// `signal` is the name in kSignalNames, `words` how the log and the analyzer say it.
void Consider(Worst& worst, const std::optional<double>& value, double high, const char* signal,
              const char* words) {
  if (!value) return;
  const double share = *value / high;
  if (share <= worst.share && !worst.cause.empty()) return;
  char text[96];
  std::snprintf(text, sizeof text, "%s %.0f%%", words, *value);
  worst = Worst{share, text, signal};
}

}  // namespace

std::string CheckGovernorOptions(const GovernorOptions& o) {
  if (o.steps.empty() || o.steps.front() != 1.0) return "steps must start at 1";
  for (std::size_t i = 0; i < o.steps.size(); ++i) {
    if (!(o.steps[i] > 0.0 && o.steps[i] <= 1.0)) return "steps must be in (0, 1]";
    if (i > 0 && !(o.steps[i] < o.steps[i - 1])) return "steps must decrease";
  }
  for (const double high : {o.cpu_high, o.memory_high, o.throttled_high}) {
    if (!(high > 0.0 && high <= 100.0)) return "high marks must be in (0, 100] percent";
  }
  if (!(o.calm_share > 0.0 && o.calm_share < 1.0)) return "calm_share must be in (0, 1)";
  if (o.step_down_every <= std::chrono::nanoseconds::zero() ||
      o.calm_for <= std::chrono::nanoseconds::zero()) {
    return "step_down_every and calm_for must be positive";
  }
  return {};
}

RateGovernor::RateGovernor(GovernorOptions options) : options_(std::move(options)) {
  if (const std::string error = CheckGovernorOptions(options_); !error.empty()) {
    throw std::invalid_argument("rate governor: " + error);
  }
}

std::optional<StepChange> RateGovernor::Observe(const PressureSample& s, MonoTime now) {
  Worst worst;
  Consider(worst, s.cpu, options_.cpu_high, "cpu", "host cpu pressure");
  Consider(worst, s.memory, options_.memory_high, "memory", "host memory pressure");
  Consider(worst, s.cgroup_cpu, options_.cpu_high, "cgroup_cpu", "cgroup cpu pressure");
  Consider(worst, s.cgroup_memory, options_.memory_high, "cgroup_memory", "cgroup memory pressure");
  Consider(worst, s.cgroup_throttled, options_.throttled_high, "cgroup_throttled",
           "cgroup cpu throttled");
  Consider(worst, s.self_cpu_wait, options_.cpu_high, "self_cpu_wait", "agent cpu wait");
  last_share_ = worst.share;
  last_cause_ = worst.cause;
  last_signal_ = worst.signal;

  if (worst.share >= 1.0) {
    calm_since_.reset();
    if (step_ == lowest_step()) return std::nullopt;
    if (last_down_ && now - *last_down_ < options_.step_down_every) return std::nullopt;
    last_down_ = now;
    ++step_;
    return StepChange{step_ - 1, step_, worst.cause, worst.signal};
  }
  if (worst.share >= options_.calm_share) {
    calm_since_.reset();
    return std::nullopt;
  }
  if (!calm_since_) calm_since_ = now;
  if (step_ == 0 || now - *calm_since_ < options_.calm_for) return std::nullopt;
  calm_since_ = now;  // the next step up waits as long again
  --step_;
  return StepChange{step_ + 1, step_,
                    worst.cause.empty() ? std::string("no pressure signal") : worst.cause,
                    worst.signal};
}

}  // namespace hostmesh::agent::protect
