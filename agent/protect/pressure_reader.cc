#include "agent/protect/pressure_reader.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

namespace hostmesh::agent::protect {
namespace {

namespace fs = std::filesystem;

bool Exists(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// root / "sys/fs/cgroup" / cgroup_path, where cgroup_path is absolute ("/a/b").
fs::path Under(const fs::path& base, const std::string& cgroup_path) {
  return base / fs::path(cgroup_path).relative_path();
}

}  // namespace

PressureReader::PressureReader(fs::path root, SignalMask watched)
    : root_(std::move(root)),
      watched_(watched),
      watch_cgroup_(watched[kCgroupCpu] || watched[kCgroupMemory] || watched[kCgroupThrottled]),
      host_cpu_(root_ / "proc/pressure/cpu"),
      host_memory_(root_ / "proc/pressure/memory") {
  Locate();
}

void PressureReader::Locate() {
  if (!watch_cgroup_) return;
  std::optional<std::string> self = Slurp(root_ / "proc/self/cgroup");
  if (!self || *self == self_cgroup_) return;
  self_cgroup_ = std::move(*self);
  const CgroupPaths paths = ParseSelfCgroup(self_cgroup_);
  const fs::path& root = root_;
  cgroup_cpu_psi_.clear();
  cgroup_memory_psi_.clear();
  cgroup_cpu_stat_.clear();
  last_stat_.reset();
  // Where the hierarchies are mounted: /sys/fs/cgroup, or elsewhere (a
  // network namespace's sysfs hides that; the testbed binds them elsewhere).
  const std::string mounts = Slurp(root / "proc/self/mounts").value_or("");
  // The root cgroup's files are the host's: only a cgroup of its own counts.
  if (!paths.unified.empty() && paths.unified != "/") {
    std::vector<fs::path> bases = {root / "sys/fs/cgroup", root / "sys/fs/cgroup/unified"};
    if (const std::string point = ParseCgroup2Mount(mounts); !point.empty()) {
      bases.insert(bases.begin(), root / fs::path(point).relative_path());
    }
    for (const fs::path& base : bases) {
      const fs::path dir = Under(base, paths.unified);
      if (Exists(dir / "cpu.pressure")) cgroup_cpu_psi_ = dir / "cpu.pressure";
      if (Exists(dir / "memory.pressure")) cgroup_memory_psi_ = dir / "memory.pressure";
      if (const auto text = Slurp(dir / "cpu.stat"); text && ParseCpuStat(*text)) {
        cgroup_cpu_stat_ = dir / "cpu.stat";
      }
      if (!cgroup_cpu_psi_.empty() || !cgroup_cpu_stat_.empty()) break;
    }
  }
  if (cgroup_cpu_stat_.empty() && !paths.cpu_v1.empty() && paths.cpu_v1 != "/") {
    std::vector<fs::path> points = {root / "sys/fs/cgroup/cpu", root / "sys/fs/cgroup/cpu,cpuacct"};
    if (const std::string point = ParseCpuMount(mounts); !point.empty()) {
      points.insert(points.begin(), root / fs::path(point).relative_path());
    }
    for (const fs::path& mount : points) {
      const fs::path stat = Under(mount, paths.cpu_v1) / "cpu.stat";
      if (Exists(stat)) {
        cgroup_cpu_stat_ = stat;
        break;
      }
    }
  }
}

std::optional<std::string> PressureReader::Slurp(const fs::path& file) {
  std::ifstream in(file);
  if (!in) {
    std::error_code ec;
    if (fs::exists(file, ec)) ++read_errors_;  // absent is a signal the host lacks, not a failure
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad() || !text) {
    ++read_errors_;
    return std::nullopt;
  }
  return text.str();
}

std::optional<double> PressureReader::Psi(const fs::path& file) {
  if (file.empty()) return std::nullopt;
  const std::optional<std::string> text = Slurp(file);
  if (!text) return std::nullopt;
  const std::optional<PsiLine> psi = ParsePsi(*text);
  if (!psi) {
    ++read_errors_;
    return std::nullopt;
  }
  return psi->some_avg10;
}

std::optional<double> PressureReader::Throttled() {
  if (cgroup_cpu_stat_.empty()) return std::nullopt;
  const std::optional<std::string> text = Slurp(cgroup_cpu_stat_);
  const std::optional<CpuStat> stat = text ? ParseCpuStat(*text) : std::nullopt;
  if (!stat) {
    ++read_errors_;
    return std::nullopt;
  }
  std::optional<double> share;
  if (last_stat_ && stat->nr_periods > last_stat_->nr_periods &&
      stat->nr_throttled >= last_stat_->nr_throttled) {
    const double periods = static_cast<double>(stat->nr_periods - last_stat_->nr_periods);
    const double throttled = static_cast<double>(stat->nr_throttled - last_stat_->nr_throttled);
    share = std::min(100.0, 100.0 * throttled / periods);
  } else if (last_stat_ && stat->nr_periods == last_stat_->nr_periods) {
    share = 0.0;  // no period ran: the cgroup did not even want its limit
  }
  last_stat_ = stat;
  return share;
}

// Threads come and go: a thread seen before counts what it waited since; a
// new one all it waited in its life (it is younger than the interval, or the
// first read has nothing to compare). A thread gone takes its wait with it.
std::optional<double> PressureReader::SelfWait(MonoTime now) {
  std::error_code ec;
  fs::directory_iterator tasks(root_ / "proc/self/task", ec);
  if (ec) return std::nullopt;
  std::vector<std::pair<std::string, std::uint64_t>> waits;
  std::uint64_t waited = 0;
  for (const fs::directory_entry& task : tasks) {
    const std::optional<std::string> text = Slurp(task.path() / "schedstat");
    const std::optional<std::uint64_t> wait = text ? ParseSchedstatWait(*text) : std::nullopt;
    if (!wait) continue;  // exited since the listing, or no schedstat (no CONFIG_SCHED_INFO)
    std::string tid = task.path().filename().string();
    const auto before = std::find_if(task_waits_.begin(), task_waits_.end(),
                                     [&tid](const auto& p) { return p.first == tid; });
    waited += before == task_waits_.end() ? *wait : *wait - std::min(*wait, before->second);
    waits.emplace_back(std::move(tid), *wait);
  }
  std::optional<double> share;
  if (task_waits_at_ && now > *task_waits_at_ && !waits.empty()) {
    const double span = static_cast<double>((now - *task_waits_at_).count());
    share = std::min(100.0, 100.0 * static_cast<double>(waited) / span);
  }
  task_waits_ = std::move(waits);
  task_waits_at_ = now;
  return share;
}

PressureSample PressureReader::Read(MonoTime now) {
  Locate();
  PressureSample s;
  if (watched_[kHostCpu]) s.cpu = Psi(host_cpu_);
  if (watched_[kHostMemory]) s.memory = Psi(host_memory_);
  if (watched_[kCgroupCpu]) s.cgroup_cpu = Psi(cgroup_cpu_psi_);
  if (watched_[kCgroupMemory]) s.cgroup_memory = Psi(cgroup_memory_psi_);
  if (watched_[kCgroupThrottled]) s.cgroup_throttled = Throttled();
  if (watched_[kSelfCpuWait]) s.self_cpu_wait = SelfWait(now);
  return s;
}

std::string PressureReader::Describe() const {
  std::string out;
  const auto add = [&out](bool have, const char* name) {
    if (have) out += (out.empty() ? "" : ", ") + std::string(name);
  };
  std::error_code ec;
  add(watched_[kHostCpu] && Exists(host_cpu_), "host cpu PSI");
  add(watched_[kHostMemory] && Exists(host_memory_), "host memory PSI");
  add(watched_[kCgroupCpu] && !cgroup_cpu_psi_.empty(), "cgroup cpu PSI");
  add(watched_[kCgroupMemory] && !cgroup_memory_psi_.empty(), "cgroup memory PSI");
  add(watched_[kCgroupThrottled] && !cgroup_cpu_stat_.empty(), cgroup_cpu_stat_.c_str());
  add(watched_[kSelfCpuWait] && fs::is_directory(root_ / "proc/self/task", ec),
      "the agent's threads' CPU wait");
  return out;
}

}  // namespace hostmesh::agent::protect
