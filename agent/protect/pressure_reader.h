#pragma once

// Reads the pressure signals of rate_governor.h from the kernel's files under
// a root (tests point it at a fake tree): /proc/pressure/{cpu,memory}, and
// for the agent's own cgroup (found in /proc/self/cgroup at construction)
// v2's cpu.pressure, memory.pressure and cpu.stat, or v1's cpu controller's
// cpu.stat. /proc/self/cgroup is read again at each Read (one small file), so
// an agent moved to another cgroup is followed. A file that is absent is a signal the host does not
// have; one that was there and fails to read or parse is counted (read_errors).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/protect/pressure_text.h"
#include "agent/protect/rate_governor.h"
#include "common/base/clock.h"

namespace hostmesh::agent::protect {

class PressureReader {
 public:
  // Reads only the signals `watched` (the others are nullopt, their files
  // never opened: /proc/self/task alone is a dozen files a sample).
  explicit PressureReader(std::filesystem::path root = "/", SignalMask watched = kAllSignals);

  // The signals at `now` (monotonic). The cgroup's throttled share and the
  // agent's CPU wait are over the time since the previous call (absent on
  // the first).
  PressureSample Read(MonoTime now);

  // What this host offers of the watched signals, for the start-up log
  // line, e.g. "host cpu PSI, host memory PSI"; empty when nothing
  // (self-protection blind).
  std::string Describe() const;
  std::uint64_t read_errors() const { return read_errors_; }

 private:
  // Finds the cgroup's files when /proc/self/cgroup says something new.
  void Locate();
  // The file's text; nullopt when absent (read_errors_ counts other failures).
  std::optional<std::string> Slurp(const std::filesystem::path& file);
  std::optional<double> Psi(const std::filesystem::path& file);
  std::optional<double> Throttled();
  std::optional<double> SelfWait(MonoTime now);

  std::filesystem::path root_;
  SignalMask watched_;
  bool watch_cgroup_;        // some cgroup signal is watched: its files are located
  std::string self_cgroup_;  // the text Locate last found the files for
  std::filesystem::path host_cpu_;
  std::filesystem::path host_memory_;
  std::filesystem::path cgroup_cpu_psi_;     // empty: none
  std::filesystem::path cgroup_memory_psi_;  // empty: none
  std::filesystem::path cgroup_cpu_stat_;    // empty: none
  std::optional<CpuStat> last_stat_;
  // Per thread id, its run-queue wait at the last read; and when that was.
  std::vector<std::pair<std::string, std::uint64_t>> task_waits_;
  std::optional<MonoTime> task_waits_at_;
  std::uint64_t read_errors_ = 0;
};

}  // namespace hostmesh::agent::protect
