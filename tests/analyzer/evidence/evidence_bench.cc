// What keeping evidence adds to the judging of a window (issue 27: at most
// 5% with 100 concurrent incidents at 1,000 hosts). 1,000 hosts x 8 rails x
// 16 spines, pools of 16 ports all traced (about 1.8 M live 5-tuples); 100
// faults at once: 40 rail-to-spine links and 60 RNICs losing 2% to 50%.
// Each iteration judges one 20 s window (1.6 M results, probed outside the
// timing) and updates the incidents; with arg 1 the evidence keeper then
// decides the window's evidence events (a path-table pass for the incidents
// opened in it). The writer's store reads run on its own thread, not here.
// Run: build/tests/analyzer/evidence/hm_evidence_bench
#include <benchmark/benchmark.h>

#include "analyzer/evidence/evidence_keeper.h"
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
  for (auto _ : state) {
    state.PauseTiming();
    fleet.ProbeInto(analysis, start, faults);
    state.ResumeTiming();
    for (const auto& report : analysis.Advance(start + 30 * kSecond)) {
      const std::vector<std::uint64_t> touched = incidents.Update(report);
      if (!keep) continue;
      for (const EvidenceEvent& e :
           keeper.OnWindow(report, touched, incidents, analysis.paths(), analysis.fabric(),
                           agent_of)) {
        ++events;
        tuples += e.tuples.size();
      }
    }
    start += 20 * kSecond;
  }
  state.counters["open_incidents"] = static_cast<double>(incidents.open().size());
  state.counters["events"] = static_cast<double>(events);
  state.counters["tuples_followed"] = static_cast<double>(tuples);
}
BENCHMARK(BM_CloseWindow1k_100Faults)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(6)
    ->UseRealTime();

}  // namespace
}  // namespace hostmesh::analyzer::evidence

BENCHMARK_MAIN();
