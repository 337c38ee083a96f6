// The in-process analysis pipeline: results per second through AddResult, and
// the cost of judging one window of 16 million results (10,000 hosts x 8 NICs x
// 10 probes/s x 20 s). Run: build-analysis/tests/analyzer/analysis/hm_analysis_bench

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/analysis/incidents.h"
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

// Ingest in the fleet's shape: 10,000 hosts x 8 NICs x 16 ports all traced (a
// path table of 9 M 5-tuples, far larger than the cache), results arriving as
// each host's upload of one second (80 results). First arg 0: AddResult one
// at a time; 1: AddResults per upload (slots loaded ahead). Second: percent of
// the 5-tuples traced (the others count per 5-tuple as untraced).
void BM_IngestFleet10k(benchmark::State& state) {
  SyntheticFleet fleet(FleetShape{.hosts = 10'000, .rails = 8, .spines = 32, .ports = 16});
  Analysis analysis(AnalysisConfig{}, fleet.Map());
  fleet.TracePaths(analysis, kT0, static_cast<double>(state.range(1)) / 100);
  std::vector<ProbeRecord> results;
  fleet.Probe(kT0, 2, {}, [&](const ProbeRecord& r) { results.push_back(r); });
  std::stable_sort(results.begin(), results.end(), [](const ProbeRecord& a, const ProbeRecord& b) {
    return std::pair(a.send_time_ns / kSecond, a.host) <
           std::pair(b.send_time_ns / kSecond, b.host);
  });
  const bool batched = state.range(0) == 1;
  std::int64_t shift = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<ProbeRecord> pass = results;
    for (auto& r : pass) r.send_time_ns += shift;
    state.ResumeTiming();
    if (batched) {
      std::size_t begin = 0;
      for (std::size_t i = 1; i <= pass.size(); ++i) {
        if (i == pass.size() || pass[i].host != pass[begin].host) {
          analysis.AddResults(std::span<const ProbeRecord>(pass).subspan(begin, i - begin));
          begin = i;
        }
      }
    } else {
      for (const auto& r : pass) analysis.AddResult(r);
    }
    state.PauseTiming();
    shift += 20 * kSecond;
    benchmark::DoNotOptimize(analysis.Advance(kT0 + shift + 10 * kSecond));
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(results.size()));
}
BENCHMARK(BM_IngestFleet10k)
    ->Args({0, 100})
    ->Args({1, 100})
    ->Args({0, 50})
    ->Args({1, 50})
    ->Iterations(6)
    ->Unit(benchmark::kMillisecond);

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

// The same fleet with 20 concurrent faults: 12 rail-to-spine links and 8 RNICs,
// losing 1% to 100% (two links on one spine, two on one rail); the close
// includes the incident update. Counters: the
// faults named (found, of 20), components blamed that were not faulty (false),
// and failure groups the inference went through.
void BM_CloseWindow16M_20Faults(benchmark::State& state) {
  SyntheticFleet fleet(FleetShape{.hosts = 10'000, .rails = 8, .spines = 64, .ports = 8});
  Analysis analysis(AnalysisConfig{}, fleet.Map());
  fleet.TracePaths(analysis, kT0);
  Faults faults;
  const std::pair<std::uint32_t, std::uint32_t> links[] = {{0, 3},  {1, 17}, {2, 7},  {5, 7},
                                                           {3, 40}, {4, 22}, {6, 63}, {7, 0},
                                                           {2, 31}, {0, 50}, {1, 9},  {6, 12}};
  const double link_rates[] = {1.0, 1.0, 0.5, 0.3, 0.2, 0.1, 0.05, 0.05, 0.03, 0.02, 0.01, 0.01};
  for (std::size_t i = 0; i < 12; ++i) {
    faults.link_loss[fleet.RailSpine(links[i].first, links[i].second)] = link_rates[i];
  }
  const std::pair<HostId, NicId> rnics[] = {{42, 3},   {1234, 0}, {2500, 7}, {5001, 5},
                                            {6789, 1}, {8000, 2}, {9100, 4}, {9999, 6}};
  const double rnic_rates[] = {1.0, 1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01};
  for (std::size_t i = 0; i < 8; ++i) faults.nic_loss[rnics[i]] = rnic_rates[i];

  IncidentTracker incidents;
  std::int64_t start = kT0;
  for (auto _ : state) {
    state.PauseTiming();
    std::uint64_t n = 0;
    fleet.Probe(start, 20, faults, [&](const ProbeRecord& r) {
      analysis.AddResult(r);
      ++n;
    });
    state.counters["results"] = static_cast<double>(n);
    state.counters["window_MB"] = static_cast<double>(analysis.open_window_bytes()) / 1e6;
    state.ResumeTiming();
    const auto reports = analysis.Advance(start + 30 * kSecond);
    for (const auto& r : reports) benchmark::DoNotOptimize(incidents.Update(r));
    state.PauseTiming();
    if (reports.size() != 1) state.SkipWithError("no report");
    int found = 0, wrong = 0;
    for (const auto& c : reports.empty() ? std::vector<Suspect>{} : reports[0].loss.culprits) {
      const bool faulty = c.component.kind == Component::Kind::kLink
                              ? faults.link_loss.count(c.component.link) > 0
                              : faults.nic_loss.count({c.component.host, c.component.nic}) > 0;
      (faulty ? found : wrong) += 1;
    }
    state.counters["found"] = found;
    state.counters["false"] = wrong;
    state.counters["peak_rss_MB"] = static_cast<double>(PeakRssKb()) / 1e3;
    start += 20 * kSecond;
    state.ResumeTiming();
  }
}
BENCHMARK(BM_CloseWindow16M_20Faults)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();

// The path table in steady state at 10,000 hosts x 8 NICs with the agents'
// defaults: pools of 16 ports, a quarter replaced every minute, every port
// traced (reported) when it enters and probed until it leaves. Prints the
// table's entries and memory once a virtual minute; counters: the last minute.
void BM_PathTableSteadyState10k(benchmark::State& state) {
  constexpr HostId kHosts = 10'000;
  constexpr NicId kNics = 8;
  constexpr int kMinutes = 20;
  for (auto _ : state) {
    PathTable table;  // default ttl
    std::vector<std::uint16_t> pools(std::size_t{kHosts} * kNics * 16);
    std::uint16_t next_port = 0;
    auto each_dst = [&](HostId h, NicId n, std::uint16_t port, auto&& f) {
      for (NicId d = 0; d < kNics; ++d) {
        if (d != n)
          f(PathRecord{h,
                       n,
                       d,
                       port,
                       4791,
                       0,
                       {h * kNics + n, 100'000 + n * 64 + port % 64, 100'000 + d * 64 + port % 64,
                        h * kNics + d}});
      }
    };
    for (std::size_t i = 0; i < pools.size(); ++i) {
      pools[i] = next_port++;
      each_dst(static_cast<HostId>(i / (kNics * 16)), static_cast<NicId>(i / 16 % kNics), pools[i],
               [&](const PathRecord& p) { table.Add(p); });
    }
    for (int minute = 1; minute <= kMinutes; ++minute) {
      const std::int64_t now = kT0 + std::int64_t{minute} * 60 * kSecond;
      for (std::int64_t t = now - 59 * kSecond; t <= now; t += kSecond) table.AdvanceTo(t);
      // A quarter of each pool leaves (its last probe now) and new ports enter.
      for (std::size_t pool = 0; pool < pools.size() / 16; ++pool) {
        const auto h = static_cast<HostId>(pool / kNics);
        const auto n = static_cast<NicId>(pool % kNics);
        for (int k = 0; k < 4; ++k) {
          std::uint16_t& slot = pools[pool * 16 + static_cast<std::size_t>((minute * 4 + k) % 16)];
          each_dst(h, n, slot, [&](const PathRecord& p) {
            table.Use(p.host, p.src_nic, p.dst_nic, p.src_port);
          });
          slot = next_port++;
          each_dst(h, n, slot, [&](const PathRecord& p) { table.Add(p); });
        }
      }
      std::printf("  minute %2d: %5.1f M 5-tuples, %6.1f MB, %llu aged out\n", minute,
                  static_cast<double>(table.size()) / 1e6,
                  static_cast<double>(table.memory_bytes()) / 1e6,
                  static_cast<unsigned long long>(table.aged_out()));
    }
    state.counters["tuples_M"] = static_cast<double>(table.size()) / 1e6;
    state.counters["table_MB"] = static_cast<double>(table.memory_bytes()) / 1e6;
    state.counters["per_host_B"] = static_cast<double>(table.memory_bytes()) / kHosts;
  }
}
BENCHMARK(BM_PathTableSteadyState10k)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

// Incident bookkeeping at fleet scale: 1,792 incidents open (14 windows of 64
// RNIC and 64 link culprits, none seen since), then a window of 10,000 hosts x
// 8 NICs with 20 culprits: each open incident is matched, or looked up as
// observed or not, against that report.
void BM_IncidentUpdate(benchmark::State& state) {
  constexpr HostId kHosts = 10'000;
  constexpr LinkId kLinks = kHosts * 8 + 8 * 64;
  IncidentTracker filled;
  for (int w = 0; w < 14; ++w) {
    WindowReport r;
    r.start_ns = kT0 + w * 20 * kSecond;
    r.end_ns = r.start_ns + 20 * kSecond;
    for (int i = 0; i < 64; ++i) {
      Suspect rnic;
      rnic.component = {Component::Kind::kRnic, kUnknown, static_cast<HostId>((w * 64 + i) * 11),
                        1};
      rnic.loss = 1.0;
      r.loss.culprits.push_back(rnic);
      Suspect link;
      link.component.link = static_cast<LinkId>(w * 64 + i);
      link.loss = 0.5;
      r.loss.culprits.push_back(link);
    }
    filled.Update(r);
  }
  WindowReport report;
  report.start_ns = kT0 + 14 * 20 * kSecond;
  report.end_ns = report.start_ns + 20 * kSecond;
  for (HostId h = 0; h < kHosts; ++h) {
    report.present_hosts.push_back(h);
    for (NicId n = 0; n < 8; ++n) report.rnics.push_back({.host = h, .nic = n, .probes = 400});
  }
  for (LinkId l = 0; l < kLinks; ++l) report.coverage.crossed.push_back(l);
  for (int i = 0; i < 20; ++i) {
    Suspect link;
    link.component.link = static_cast<LinkId>(kHosts * 8 + i);
    link.loss = 0.1;
    report.loss.culprits.push_back(link);
  }
  for (auto _ : state) {
    state.PauseTiming();
    IncidentTracker tracker = filled;
    state.ResumeTiming();
    benchmark::DoNotOptimize(tracker.Update(report));
  }
  state.counters["open"] = static_cast<double>(filled.open().size());
}
BENCHMARK(BM_IncidentUpdate)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace hostmesh::analysis::testing

BENCHMARK_MAIN();
