#pragma once

// Self-protection's decision, pure (samples and time in, steps out): under
// host pressure the agent probes at a fraction of its configured rate, one
// step down at a time (1, 0.5, 0.25, 0.1 by default; never zero, so a
// starved host's processing delay stays measured), and back up one step at
// a time after the pressure has stayed low for a while.
//
// Pressure is the worst of the signals present, each as a share of its own
// high mark: the host's CPU and memory PSI ("some" avg10, percent of time a
// task waited), the same of the agent's cgroup (cgroup v2), the share of
// CPU periods in which the agent's cgroup hit its CPU limit, and the share
// of time the agent's own threads waited for a CPU (against the CPU mark).
//   share >= 1            step down, at most once per step_down_every
//   share < calm_share    calm: after calm_for of it, step up (then calm again)
//   in between            hold, and the calm time starts over
// The gap between the two marks and the calm time are the hysteresis: a load
// that comes and goes every few seconds holds the step down.

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/base/clock.h"

namespace hostmesh::agent::protect {

// The signals by name, in PressureSample's order (config, /metrics labels).
inline constexpr std::array<const char*, 6> kSignalNames = {
    "cpu", "memory", "cgroup_cpu", "cgroup_memory", "cgroup_throttled", "self_cpu_wait"};

enum SignalIndex : std::size_t {
  kHostCpu,
  kHostMemory,
  kCgroupCpu,
  kCgroupMemory,
  kCgroupThrottled,
  kSelfCpuWait
};

// Which signals to read, by index in kSignalNames (protect.signals).
using SignalMask = std::array<bool, kSignalNames.size()>;
inline constexpr SignalMask kAllSignals = {true, true, true, true, true, true};

// One reading of the signals, in percent; nullopt where the host has none.
struct PressureSample {
  std::optional<double> cpu;               // /proc/pressure/cpu some avg10
  std::optional<double> memory;            // /proc/pressure/memory some avg10
  std::optional<double> cgroup_cpu;        // <cgroup>/cpu.pressure some avg10 (v2)
  std::optional<double> cgroup_memory;     // <cgroup>/memory.pressure some avg10 (v2)
  std::optional<double> cgroup_throttled;  // periods at the CPU limit since the last sample
  // The agent's own threads' wait for a CPU (runnable, not running; CFS
  // throttling included) as a share of the time since the last sample: its
  // own pressure, wherever its cgroup and PSI files cannot be seen.
  std::optional<double> self_cpu_wait;

  // By index in kSignalNames.
  std::optional<double>& at(std::size_t i) {
    std::optional<double>* all[] = {&cpu,           &memory,           &cgroup_cpu,
                                    &cgroup_memory, &cgroup_throttled, &self_cpu_wait};
    return *all[i];
  }
  const std::optional<double>& at(std::size_t i) const {
    return const_cast<PressureSample&>(*this).at(i);
  }
};

struct GovernorOptions {
  std::vector<double> steps = {1.0, 0.5, 0.25, 0.1};  // decreasing, first 1, all > 0
  double cpu_high = 60;                               // percent, host and cgroup CPU PSI
  double memory_high = 20;                            // percent, host and cgroup memory PSI
  double throttled_high = 50;  // percent of CPU periods at the cgroup's limit
  double calm_share = 0.5;     // calm below this share of every high mark
  std::chrono::nanoseconds step_down_every = std::chrono::seconds{5};
  std::chrono::nanoseconds calm_for = std::chrono::seconds{25};
};
// Empty when the options hold together, else what is wrong.
std::string CheckGovernorOptions(const GovernorOptions& options);

struct StepChange {
  std::size_t from = 0;
  std::size_t to = 0;
  std::string cause;   // the worst signal, e.g. "cgroup cpu throttled 93%"
  std::string signal;  // its name in kSignalNames ("cgroup_throttled"); empty: none read
};

class RateGovernor {
 public:
  // Throws std::invalid_argument when CheckGovernorOptions finds a fault.
  explicit RateGovernor(GovernorOptions options);

  // The step this sample at `now` leads to, when it changed.
  std::optional<StepChange> Observe(const PressureSample& sample, MonoTime now);

  std::size_t step() const { return step_; }
  double fraction() const { return options_.steps[step_]; }
  std::size_t lowest_step() const { return options_.steps.size() - 1; }
  // The share of its high mark of the worst signal of the last sample (0 with none).
  double last_share() const { return last_share_; }
  const std::string& last_cause() const { return last_cause_; }
  const std::string& last_signal() const { return last_signal_; }

 private:
  GovernorOptions options_;
  std::size_t step_ = 0;
  std::optional<MonoTime> last_down_;
  std::optional<MonoTime> calm_since_;
  double last_share_ = 0;
  std::string last_cause_;
  std::string last_signal_;
};

}  // namespace hostmesh::agent::protect
