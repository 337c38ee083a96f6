#include "sim/simulation.h"

#include <malloc.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "sim/analyzer_side.h"
#include "sim/diagnosis_side.h"

// jemalloc's control interface, when jemalloc is the allocator (the
// simulator and the analyzer link it; a test binary may not): weak, so the
// symbol is null under glibc's malloc.
extern "C" int mallctl(const char* name, void* oldp, std::size_t* oldlenp, void* newp,
                       std::size_t newlen) __attribute__((weak));

namespace hostmesh::sim {
namespace {

std::vector<std::uint32_t> SwitchSeeds(const Fleet& fleet, std::uint32_t hash_seed,
                                       std::uint64_t seed) {
  std::vector<std::uint32_t> seeds(fleet.device_count(), hash_seed);
  if (hash_seed == 0) {
    agent::Rng rng(seed ^ 0x5EEDECB9ULL);
    for (auto& s : seeds) s = static_cast<std::uint32_t>(rng.Next() | 1);
  }
  return seeds;
}

}  // namespace

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::size_t ProcessRssBytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::size_t HeapBytesInUse() {
  if (mallctl != nullptr) {
    // jemalloc's statistics are refreshed by advancing its epoch.
    std::uint64_t epoch = 1;
    std::size_t len = sizeof(epoch);
    mallctl("epoch", &epoch, &len, &epoch, len);
    std::size_t allocated = 0;
    len = sizeof(allocated);
    if (mallctl("stats.allocated", &allocated, &len, nullptr, 0) == 0) return allocated;
  }
  return mallinfo2().uordblks;
}

Simulation::Simulation(SimConfig config) : config_(std::move(config)) {
  fleet_ = std::make_unique<Fleet>(config_.shape);
  faults_ = std::make_unique<FaultSet>(*fleet_, config_.faults, config_.background, config_.seed);
  router_ = std::make_unique<ecmp::FabricRouter>(
      fleet_->topology(), SwitchSeeds(*fleet_, config_.hash_seed, config_.seed));
  model_ = std::make_unique<PacketModel>(*fleet_, *faults_, *router_, config_.latency);
  // Probes run past the end by the timeout; episodes cover that too.
  moving_ = std::make_unique<MovingCongestion>(
      *fleet_, config_.latency.moving,
      config_.duration_ns + config_.agent.probe.timeout.count() + config_.slice_ns, config_.seed);
  model_->SetCongestion(moving_.get());
}

Simulation::~Simulation() = default;

SimResult Simulation::Run(const WindowObserver& on_window, const UploadObserver& on_upload,
                          int memory_every, const MemoryObserver& on_memory) {
  const auto wall_start = std::chrono::steady_clock::now();
  const std::size_t n = fleet_->hosts().size();
  std::vector<std::unique_ptr<HostAgent>> agents;
  agents.reserve(n);
  for (std::uint32_t h = 0; h < n; ++h) {
    agents.push_back(std::make_unique<HostAgent>(h, *model_, config_.agent, config_.icmp,
                                                 kWallOffsetNs, config_.seed));
  }
  AnalyzerSide analyzer(*fleet_, config_.analysis);
  // Two upload buffers: the analyzer ingests slice k on a thread of its own
  // while the hosts run slice k+1 (nothing the analyzer concludes feeds back
  // into the hosts, and it ingests in host order, so results do not change).
  DiagnosisSide diagnosis(*fleet_, *faults_, kWallOffsetNs, config_.analysis.window.count());
  analyzer.AttachDiagnosis(&diagnosis);
  std::vector<HostOutput> uploads(n), ingesting(n);
  std::vector<std::uint8_t> uploaded(n), ingest_uploaded(n);
  std::vector<std::uint8_t> running(n), ingest_running(n);
  std::vector<std::uint8_t> dead;
  std::vector<LinkId> dead_list, last_dead_list;
  ecmp::DeadLinks dead_state;
  SimResult result;
  // Agents run past the end by the probe timeout, so the probes sent before it
  // are all decided (what they send after it is dropped); the analyzer runs
  // on until its grace has passed, so the last window is judged.
  const std::int64_t timeout = config_.agent.probe.timeout.count();
  const std::int64_t run_until =
      config_.duration_ns + std::max(timeout, config_.analysis.grace.count()) + config_.slice_ns;
  const int threads = std::max(1, config_.threads);

  // The analyzer's half of a slice: every host's upload in host order, then
  // the windows that are due.
  double host_cpu_done = 0;  // the host threads' CPU up to the slice being ingested
  double convert_cpu_done = 0;
  const auto analyze = [&](std::int64_t start, std::int64_t end, int slice_index) {
    const double cpu_start = ThreadCpuSeconds();
    diagnosis.Sample(start, end, ingest_running);  // read by the analyzer's judging
    for (std::uint32_t h = 0; h < n; ++h) {
      if (ingest_uploaded[h]) analyzer.Ingest(h, ingesting[h]);
    }
    // Windows that end by the run's end are judged; the one after is partial.
    const std::int64_t judge_at =
        std::min(end, config_.duration_ns + config_.analysis.grace.count());
    for (const analysis::WindowReport& report : analyzer.Advance(kWallOffsetNs + judge_at)) {
      WindowRecord rec;
      rec.start_ns = report.start_ns - kWallOffsetNs;
      rec.end_ns = report.end_ns - kWallOffsetNs;
      if (rec.end_ns > config_.duration_ns) continue;
      rec.results = report.results;
      rec.hosts = static_cast<std::uint32_t>(report.present_hosts.size());
      const std::vector<std::uint32_t>& map = analyzer.fleet_hosts();
      rec.ours = OurVerdict(report, *fleet_, map);
      rec.paper = PaperVerdict(report, *fleet_, map);
      if (on_window) on_window(report, rec);
      result.windows.push_back(std::move(rec));
    }
    if (memory_every > 0 && slice_index % memory_every == 0) {
      MemorySample m;
      m.at_ns = end;
      m.rss_bytes = ProcessRssBytes();
      m.path_table_bytes = analyzer.analysis().paths().memory_bytes();
      m.path_table_entries = analyzer.analysis().paths().size();
      m.open_window_bytes = analyzer.analysis().open_window_bytes();
      m.heap_bytes = HeapBytesInUse();
      m.wall_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      m.host_cpu_seconds = host_cpu_done;
      m.convert_cpu_seconds = convert_cpu_done;
      m.analyzer_seconds = result.analyzer_seconds + ThreadCpuSeconds() - cpu_start;
      result.memory.push_back(m);
      if (on_memory) on_memory(m);
    }
    result.analyzer_seconds += ThreadCpuSeconds() - cpu_start;
  };
  std::thread analyzer_thread;

  std::vector<double> host_cpu(static_cast<std::size_t>(threads));
  std::vector<double> convert_cpu(static_cast<std::size_t>(threads));
  std::vector<PathConverter> converters;
  for (int k = 0; k < threads; ++k) converters.emplace_back(fleet_->topology());
  std::vector<google::protobuf::RepeatedPtrField<v1::PathReport>> wire_spares(
      static_cast<std::size_t>(threads));
  // The tracer's reports themselves only for an observer of uploads.
  const bool keep_paths = static_cast<bool>(on_upload);
  int slice_index = 0;
  for (std::int64_t t = 0; t < run_until; t += config_.slice_ns, ++slice_index) {
    const std::int64_t end = t + config_.slice_ns;
    faults_->DeadLinksAt(t, dead);
    dead_list.clear();
    for (LinkId l = 0; l < dead.size(); ++l) {
      if (dead[l]) dead_list.push_back(l);
    }
    if (dead_list != last_dead_list) {
      dead_state = router_->Reconverge(dead_list);
      last_dead_list = dead_list;
    }
    model_->SetDeadLinks(dead_list.empty() ? nullptr : &dead_state);
    const bool probing = t < config_.duration_ns + timeout;
    for (std::uint32_t h = 0; h < n; ++h) {
      HostAgent& a = *agents[h];
      const bool absent = !probing || faults_->HostAbsent(h, t);
      if (absent && a.running()) a.Stop();
      if (!absent && (!a.running() || faults_->RestartsBetween(h, t, end) > 0)) a.Start(t);
    }
    const auto hosts_start = std::chrono::steady_clock::now();
    const auto run_range = [&](int k) {
      const auto ks = static_cast<std::size_t>(k);
      double cpu = ThreadCpuSeconds();
      const std::size_t first = n * k / threads, last = n * (k + 1) / threads;
      // The analyzer's ingest conversion of the paths, ahead of its loop,
      // right after each host, while its reports are in cache.
      PathConverter& converter = converters[ks];
      for (std::size_t h = first; h < last; ++h) {
        HostOutput& u = uploads[h];
        u.Clear();
        u.keep_paths = keep_paths;
        u.wire_paths.Swap(&wire_spares[ks]);
        agents[h]->RunUntil(end, u);
        if (u.wire_paths.empty()) {
          u.wire_paths.Swap(&wire_spares[ks]);  // the warm set stays with the thread
          u.converted_ahead = true;             // nothing to convert
          continue;
        }
        const double cpu_host = ThreadCpuSeconds();
        host_cpu[ks] += cpu_host - cpu;
        converter.Convert(u, &wire_spares[ks]);
        cpu = ThreadCpuSeconds();
        convert_cpu[ks] += cpu - cpu_host;
      }
      host_cpu[ks] += ThreadCpuSeconds() - cpu;
    };
    std::vector<std::thread> workers;
    for (int k = 1; k < threads; ++k) workers.emplace_back(run_range, k);
    run_range(0);
    for (auto& w : workers) w.join();
    result.host_wall_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - hosts_start).count();
    if (analyzer_thread.joinable()) analyzer_thread.join();

    if (end > config_.duration_ns) {
      for (HostOutput& u : uploads) {
        std::erase_if(u.results, [&](const agent::ProbeResult& r) {
          return r.send_time_ns - kWallOffsetNs >= config_.duration_ns;
        });
      }
    }
    if (on_upload) on_upload(end, uploads);
    for (std::uint32_t h = 0; h < n; ++h) {
      result.probes += uploads[h].results.size();
      uploaded[h] = agents[h]->running() || !uploads[h].results.empty();
      running[h] = agents[h]->running() ? 1 : 0;
    }
    host_cpu_done = 0;
    for (double c : host_cpu) host_cpu_done += c;
    convert_cpu_done = 0;
    for (double c : convert_cpu) convert_cpu_done += c;
    std::swap(uploads, ingesting);
    std::swap(uploaded, ingest_uploaded);
    std::swap(running, ingest_running);
    analyzer_thread = std::thread(analyze, t, end, slice_index);
  }
  if (analyzer_thread.joinable()) analyzer_thread.join();
  for (double c : host_cpu) result.host_cpu_seconds += c;
  for (double c : convert_cpu) result.convert_cpu_seconds += c;
  result.host_of = analyzer.fleet_hosts();
  result.incidents = OurIncidents(analyzer.incidents().all(), result.host_of, kWallOffsetNs);
  result.raw_incidents = analyzer.incidents().all();
  result.paths_resolved = analyzer.counts().paths_resolved;
  result.paths_unresolved = analyzer.counts().paths_unresolved;
  result.paths_continued = analyzer.counts().paths_continued;
  result.paths_cut_short = analyzer.counts().paths_cut_short;
  result.limit_windows = LimitWindows(agents);
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

std::vector<double> Simulation::LimitWindows(
    const std::vector<std::unique_ptr<HostAgent>>& agents) const {
  const std::vector<Fault>& faults = faults_->faults();
  std::vector<FaultExposure> exposure(faults.size());
  for (const auto& a : agents) {  // in host order: the same sums whatever the threads did
    for (std::size_t i = 0; i < a->exposure().size(); ++i) exposure[i] += a->exposure()[i];
  }
  std::size_t components = 2 * fleet_->link_count();
  for (DeviceId d = 0; d < fleet_->device_count(); ++d) components += fleet_->is_switch(d);
  for (const FleetHost& h : fleet_->hosts()) components += h.nic_ips.size();
  LimitParams params;
  params.alpha = AnalyzerAlpha(config_.analysis.false_alarms_per_window, components);
  params.window_ns = config_.analysis.window.count();
  std::vector<double> out(faults.size());
  for (std::size_t i = 0; i < faults.size(); ++i) {
    // Probes a window over the time it was active within the run: a fault
    // may be given an end past it, and nothing probes there.
    Fault within = faults[i];
    within.start_ns = std::max<std::int64_t>(within.start_ns, 0);
    within.end_ns = std::min(within.end_ns, config_.duration_ns);
    out[i] = EvidenceWindows(within, exposure[i], params);
  }
  return out;
}

}  // namespace hostmesh::sim
