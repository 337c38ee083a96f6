// What keeping evidence adds to the judging of a window (issue 27: at most
// 5% with 100 concurrent incidents at 1,000 hosts). 1,000 hosts x 8 rails x
// 16 spines, pools of 16 ports all traced (about 1.8 M live 5-tuples); 100
// faults at once: 40 rail-to-spine links and 60 RNICs losing 2% to 50%.
// Each iteration judges one 20 s window (1.6 M results, probed outside the
// timing) and updates the incidents; with arg 1 the evidence keeper then
// decides the window's evidence events. The path-table pass for incidents
// that opened runs on the loop's later turns, in slices (Step: timed apart,
// step_ms_max), and the writer's store reads on its own thread.
// Run: build/tests/analyzer/evidence/hm_evidence_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>

#include "analyzer/evidence/evidence_keeper.h"
#include "analyzer/evidence/tuple_sampler.h"
#include "tests/analyzer/analysis/synthetic_fleet.h"

namespace hostmesh::analyzer::evidence {
namespace {

using analysis::testing::Faults;
using analysis::testing::FleetShape;
using analysis::testing::SyntheticFleet;

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kT0 = 1'704'067'200 * kSecond;

Faults HundredFaults(const SyntheticFleet& fleet) {
  Faults faults;
  const double rates[] = {0.5, 0.2, 0.1, 0.05, 0.02};
  for (std::uint32_t i = 0; i < 40; ++i) {
    faults.link_loss[fleet.RailSpine(i % 8, (i * 5) % 16)] = rates[i % 5];
  }
  for (std::uint32_t i = 0; i < 60; ++i) {
    faults.nic_loss[{i * 16 + 3, i % 8}] = rates[i % 5];
  }
  return faults;
}

void BM_CloseWindow1k_100Faults(benchmark::State& state) {
  const bool keep = state.range(0) != 0;
  SyntheticFleet fleet(FleetShape{.hosts = 1000, .rails = 8, .spines = 16, .ports = 16});
  analysis::Analysis analysis(analysis::AnalysisConfig{}, fleet.Map());
  fleet.TracePaths(analysis, kT0);
  const Faults faults = HundredFaults(fleet);
  analysis::IncidentTracker incidents;
  EvidenceKeeper keeper{EvidenceConfig{}};
  const auto agent_of = [](analysis::HostId h) { return "h" + std::to_string(h); };
  std::int64_t start = kT0;
  std::size_t events = 0, tuples = 0;
  double step_max_ms = 0;
  std::size_t steps = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fleet.ProbeInto(analysis, start, faults);
    state.ResumeTiming();
    for (const auto& report : analysis.Advance(start + 30 * kSecond)) {
      const std::vector<std::uint64_t> touched = incidents.Update(report);
      if (!keep) continue;
      for (const EvidenceEvent& e :
           keeper.OnWindow(report, touched, incidents, analysis.fabric(), agent_of)) {
        ++events;
        tuples += e.tuples.size();
      }
    }
    // The loop's next turns (1 s apart) read the path table in slices for the
    // incidents that opened: timed apart, they delay no judgement.
    state.PauseTiming();
    while (keep && keeper.sampling() > 0) {
      const auto t0 = std::chrono::steady_clock::now();
      for (const EvidenceEvent& e : keeper.Step(analysis.paths(), analysis.fabric(), agent_of)) {
        ++events;
        tuples += e.tuples.size();
      }
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      step_max_ms = std::max(step_max_ms, ms);
      ++steps;
    }
    state.ResumeTiming();
    start += 20 * kSecond;
  }
  state.counters["open_incidents"] = static_cast<double>(incidents.open().size());
  state.counters["events"] = static_cast<double>(events);
  state.counters["tuples_followed"] = static_cast<double>(tuples);
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["step_ms_max"] = step_max_ms;
}
BENCHMARK(BM_CloseWindow1k_100Faults)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(6)
    ->UseRealTime();

// The keeper's one path-table pass alone, for the 40 faulty links' 160
// targets (each with its 3 siblings) at once.
void BM_SampleTuples1k_40Links(benchmark::State& state) {
  SyntheticFleet fleet(FleetShape{.hosts = 1000, .rails = 8, .spines = 16, .ports = 16});
  analysis::Analysis analysis(analysis::AnalysisConfig{}, fleet.Map());
  fleet.TracePaths(analysis, kT0);
  std::vector<Target> targets;
  std::vector<std::uint32_t> limits;
  for (std::uint32_t i = 0; i < 40; ++i) {
    for (std::uint32_t s = 0; s < 4; ++s) {
      targets.push_back({Target::Kind::kLink, fleet.RailSpine(i % 8, (i * 5 + s) % 16), 0, s > 0});
      limits.push_back(s == 0 ? 2048 : 512);
    }
  }
  std::size_t kept = 0;
  for (auto _ : state) {
    for (const TargetSample& t :
         SampleTuples(analysis.paths(), analysis.fabric(), targets, limits)) {
      kept += t.tuples.size();
    }
  }
  state.counters["tuples_live"] = static_cast<double>(analysis.paths().size());
  state.counters["kept"] = static_cast<double>(kept) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SampleTuples1k_40Links)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();

}  // namespace
}  // namespace hostmesh::analyzer::evidence

BENCHMARK_MAIN();
