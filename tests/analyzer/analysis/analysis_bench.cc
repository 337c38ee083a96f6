// The in-process analysis pipeline: results per second through AddResult, and
// the cost of judging one window of 16 million results (10,000 hosts x 8 NICs x
// 10 probes/s x 20 s). Run: build-analysis/tests/analyzer/analysis/hm_analysis_bench

#include <benchmark/benchmark.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "tests/analyzer/analysis/synthetic_fleet.h"

namespace hostmesh::analysis::testing {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kT0 = 1'704'067'200 * kSecond;

long PeakRssKb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

// 1,000 hosts x 8 rails x 16 spines, 1% 100%-loss link, pools of 16 ports all traced.
void BM_Ingest(benchmark::State& state) {
  SyntheticFleet fleet(FleetShape{.hosts = 1000, .rails = 8, .spines = 16, .ports = 16});
  Analysis analysis(AnalysisConfig{}, fleet.Map());
  fleet.TracePaths(analysis, kT0);
  std::vector<ProbeRecord> results;
  results.reserve(1'600'000);
  fleet.Probe(kT0, 20, Faults{.link_loss = {{fleet.RailSpine(3, 5), 1.0}}},
              [&](const ProbeRecord& r) { results.push_back(r); });
  std::int64_t shift = 0;
  for (auto _ : state) {
    // Each pass is a fresh window (shifted by 20 s), judged outside the timing.
    for (auto r : results) {
      r.send_time_ns += shift;
      analysis.AddResult(r);
    }
    state.PauseTiming();
    shift += 20 * kSecond;
    benchmark::DoNotOptimize(analysis.Advance(kT0 + shift + 10 * kSecond));
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(results.size()));
}
BENCHMARK(BM_Ingest)->Unit(benchmark::kMillisecond)->UseRealTime();

// 10,000 hosts x 8 rails x 64 spines, 8 ports per NIC traced; one faulty link,
// one NIC down. Ingest is timed separately from the close.
void BM_CloseWindow16M(benchmark::State& state) {
  SyntheticFleet fleet(FleetShape{.hosts = 10'000, .rails = 8, .spines = 64, .ports = 8});
  Analysis analysis(AnalysisConfig{}, fleet.Map());
  fleet.TracePaths(analysis, kT0);
  const Faults faults{.link_loss = {{fleet.RailSpine(2, 7), 1.0}}, .nic_loss = {{{42, 3}, 1.0}}};
  std::int64_t start = kT0;
  for (auto _ : state) {
    state.PauseTiming();
    std::uint64_t n = 0;
    const auto t0 = std::chrono::steady_clock::now();
    fleet.Probe(start, 20, faults, [&](const ProbeRecord& r) {
      analysis.AddResult(r);
      ++n;
    });
    const double ingest_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.counters["results"] = static_cast<double>(n);
    state.counters["gen+ingest_s"] = ingest_s;
    state.counters["window_MB"] = static_cast<double>(analysis.open_window_bytes()) / 1e6;
    state.counters["path_table_MB"] = static_cast<double>(analysis.paths().memory_bytes()) / 1e6;
    state.ResumeTiming();
    const auto reports = analysis.Advance(start + 30 * kSecond);
    state.PauseTiming();
    if (reports.size() != 1 || reports[0].loss.culprits.size() != 2) {
      state.SkipWithError("wrong verdict");
    }
    state.counters["peak_rss_MB"] = static_cast<double>(PeakRssKb()) / 1e3;
    start += 20 * kSecond;
    state.ResumeTiming();
  }
}
BENCHMARK(BM_CloseWindow16M)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();

}  // namespace
}  // namespace hostmesh::analysis::testing

BENCHMARK_MAIN();
