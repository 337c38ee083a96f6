#pragma once

// One simulated run: a fleet, its faults, the agents and the analyzer, in
// virtual time. Time advances in slices (1 s, an agent's upload period): every
// host runs its own events up to the slice's end (hosts are independent, so
// they run on several threads), then the analyzer ingests what they uploaded,
// in host order, and judges the windows that are due. Reproducible from the
// seed for any number of threads.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "analyzer/analysis/config.h"
#include "sim/faults.h"
#include "sim/fleet.h"
#include "sim/host_agent.h"
#include "sim/packet_model.h"
#include "sim/scorecard.h"
#include "sim/sim_trace_io.h"

namespace hostmesh::sim {

struct SimConfig {
  topology::FabricShape shape{8, 4, 4, 1, 2, 0};
  AgentSettings agent;
  LatencyModel latency;
  IcmpModel icmp;
  analysis::AnalysisConfig analysis;
  std::int64_t duration_ns = 300'000'000'000;
  std::uint64_t seed = 1;
  // fib_multipath_hash_seed of every switch; 0: each switch its own, from the seed.
  std::uint32_t hash_seed = 0;
  std::vector<Fault> faults;
  BackgroundLoss background;
  int threads = 2;
  std::int64_t slice_ns = 1'000'000'000;
};

// 2024-01-01T00:00:00Z, a multiple of every window length that divides a day:
// simulation time 0 starts a window.
inline constexpr std::int64_t kWallOffsetNs = 1'704'067'200'000'000'000;

struct MemorySample {
  std::int64_t at_ns = 0;
  std::size_t rss_bytes = 0;
  std::size_t path_table_bytes = 0;
  std::size_t path_table_entries = 0;
  std::size_t open_window_bytes = 0;
  std::size_t heap_bytes = 0;  // the allocator's bytes in use (HeapBytesInUse)
  // Progress so far: wall time, and CPU of the hosts' and analyzer's phases.
  double wall_seconds = 0, host_cpu_seconds = 0, analyzer_seconds = 0;
  double convert_cpu_seconds = 0;  // the analyzer's path conversion on the host threads
};
// Called with each memory sample as it is taken (from the analyzer's thread).
using MemoryObserver = std::function<void(const MemorySample&)>;

struct SimResult {
  std::vector<WindowRecord> windows;
  std::vector<IncidentSpan> incidents;  // ours
  std::vector<analysis::Incident> raw_incidents;
  std::vector<std::uint32_t> host_of;  // analyzer host id -> fleet host
  std::uint64_t probes = 0;
  std::uint64_t paths_resolved = 0, paths_unresolved = 0;
  // Traces a gray link cut short: continued (among the resolved), or left out.
  std::uint64_t paths_continued = 0, paths_cut_short = 0;
  double wall_seconds = 0;
  // Where the time went: the hosts' phase of every slice (wall, and CPU summed
  // over the host threads) and the analyzer's (ingest and window close).
  double host_wall_seconds = 0, host_cpu_seconds = 0;
  double analyzer_seconds = 0;
  // The analyzer's conversion of path reports, run on the host threads after
  // their hosts (PathConverter); not in host_cpu_seconds nor analyzer_seconds.
  double convert_cpu_seconds = 0;
  std::vector<MemorySample> memory;
  // Per fault (as SimConfig::faults): the windows of evidence the reference
  // test needs to name it (information_limit.h); negative where it has none.
  std::vector<double> limit_windows;
};

// Called for each judged window with the report as the analyzer made it.
using WindowObserver = std::function<void(const analysis::WindowReport&, const WindowRecord&)>;
// Called after each slice with every host's upload of that slice (for export).
using UploadObserver =
    std::function<void(std::int64_t slice_end_ns, const std::vector<HostOutput>& uploads)>;

class Simulation {
 public:
  explicit Simulation(SimConfig config);
  ~Simulation();

  const Fleet& fleet() const { return *fleet_; }
  const SimConfig& config() const { return config_; }

  // memory_every: record a MemorySample every this many slices (0: never).
  SimResult Run(const WindowObserver& on_window = {}, const UploadObserver& on_upload = {},
                int memory_every = 0, const MemoryObserver& on_memory = {});

 private:
  // The hosts' exposure to each fault, summed, as SimResult::limit_windows.
  std::vector<double> LimitWindows(const std::vector<std::unique_ptr<HostAgent>>& agents) const;

  SimConfig config_;
  std::unique_ptr<Fleet> fleet_;
  std::unique_ptr<FaultSet> faults_;
  std::unique_ptr<ecmp::FabricRouter> router_;
  std::unique_ptr<PacketModel> model_;
  std::unique_ptr<MovingCongestion> moving_;
};

std::size_t ProcessRssBytes();
// The allocator's bytes in use (jemalloc's stats.allocated, or glibc's mallinfo2).
std::size_t HeapBytesInUse();
// CPU time of the calling thread.
double ThreadCpuSeconds();

}  // namespace hostmesh::sim
