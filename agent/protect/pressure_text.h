#pragma once

// Parsers for the kernel's pressure files, pure (text in, numbers out), so
// the reader's I/O stays thin and the formats are tested on their own:
//   /proc/pressure/{cpu,memory} and cgroup v2 {cpu,memory}.pressure:
//     "some avg10=1.23 avg60=0.50 avg300=0.10 total=12345"
//     "full avg10=0.00 avg60=0.00 avg300=0.00 total=0"
//   cgroup cpu.stat: "nr_periods N", "nr_throttled N", and the throttled time
//     as "throttled_usec N" (v2) or "throttled_time N" in ns (v1).
//   /proc/self/cgroup: "ID:controllers:path" lines; v2's is "0::path".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hostmesh::agent::protect {

struct PsiLine {
  double some_avg10 = 0;  // percent of the last 10 s some task waited
  double full_avg10 = 0;  // percent all tasks waited (0 where the file has no "full")
};
// nullopt when the text has no parsable "some" line.
std::optional<PsiLine> ParsePsi(std::string_view text);

struct CpuStat {
  std::uint64_t nr_periods = 0;
  std::uint64_t nr_throttled = 0;
  std::uint64_t throttled_ns = 0;
};
// nullopt without a throttled time (a cgroup without a CPU limit has one).
std::optional<CpuStat> ParseCpuStat(std::string_view text);

// A task's /proc/<pid>/task/<tid>/schedstat, "RUN_NS WAIT_NS SLICES": the
// time it waited on a run queue (runnable, not running), in ns.
std::optional<std::uint64_t> ParseSchedstatWait(std::string_view text);

// The agent's cgroup paths from /proc/self/cgroup: v2's ("0::/a/b"), and
// v1's cpu controller's ("N:cpu,cpuacct:/a/b"); empty when absent.
struct CgroupPaths {
  std::string unified;
  std::string cpu_v1;
};
CgroupPaths ParseSelfCgroup(std::string_view text);

// Where cgroup v1's cpu controller is mounted, from /proc/self/mounts (a
// "cgroup" file system whose options list "cpu"); empty when it is not.
std::string ParseCpuMount(std::string_view mounts);
// Where cgroup v2 is mounted (the first "cgroup2" file system); empty when not.
std::string ParseCgroup2Mount(std::string_view mounts);

}  // namespace hostmesh::agent::protect
