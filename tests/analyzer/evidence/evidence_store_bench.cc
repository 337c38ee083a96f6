// What incidents' evidence costs on disk and in the writer at fleet scale
// (issue 27: 100 concurrent incidents at 1,000 hosts within the disk cap).
// A synthetic fleet (1,000 hosts x 8 rails x 16 spines, pools of 16 ports,
// all traced; 40 lossy rail-to-spine links and 60 lossy RNICs) probes for
// `windows` windows of 20 s; every result goes into a real RocksDB store in a
// temp dir as its host's batch, the windows are judged, and the evidence
// keeper and writer run as in the analyzer (the writer on this thread, timed).
// Prints the results stored, the incidents, evidence bytes per incident and
// in all against the cap, and the writer's time per event.
// Run: build/tests/analyzer/evidence/hm_evidence_store_bench [hosts] [windows]
//      [lossy links (40, at most 128)] [lossy RNICs (60)]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "analyzer/evidence/evidence_keeper.h"
#include "analyzer/evidence/evidence_writer.h"
#include "analyzer/store/store.h"
#include "common/base/clock.h"
#include "tests/analyzer/analysis/synthetic_fleet.h"

namespace hostmesh::analyzer::evidence {
namespace {

using analysis::testing::Faults;
using analysis::testing::FleetShape;
using analysis::testing::SyntheticFleet;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kSecond = 1'000'000'000;

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

int Run(std::uint32_t hosts, int windows, std::uint32_t links, std::uint32_t rnics) {
  SyntheticFleet fleet(FleetShape{.hosts = hosts, .rails = 8, .spines = 16, .ports = 16});
  // The analysis names at most max_culprits (64) loss culprits a window: for
  // 100 concurrent incidents the bench lets it name more.
  analysis::AnalysisConfig analysis_config;
  analysis_config.max_culprits = 256;
  analysis::Analysis analysis(analysis_config, fleet.Map());
  VirtualClock clock;
  const std::int64_t t0 =
      clock.RealtimeNow().time_since_epoch().count() / (20 * kSecond) * (20 * kSecond) +
      20 * kSecond;
  fleet.TracePaths(analysis, t0);
  Faults faults;
  const double rates[] = {0.5, 0.2, 0.1, 0.05, 0.02};
  for (std::uint32_t i = 0; i < links; ++i) {
    faults.link_loss[fleet.RailSpine(i % 8, (i * 5 + i / 8) % 16)] = rates[i % 5];
  }
  for (std::uint32_t i = 0; i < rnics; ++i) {
    faults.nic_loss[{(i * 16 + 3) % hosts, i % 8}] = rates[i % 5];
  }

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hm_evidence_bench_" + std::to_string(::getpid()));
  store::StoreOptions options;
  options.data_dir = dir;
  std::string error;
  auto store = store::Store::Open(clock, options, error);
  if (!store) {
    std::fprintf(stderr, "store: %s\n", error.c_str());
    return 1;
  }
  EvidenceConfig config;
  EvidenceWriter writer(*store, clock, config);
  EvidenceKeeper keeper(config);
  analysis::IncidentTracker incidents;
  const auto agent_of = [](analysis::HostId h) { return "h" + std::to_string(h); };
  std::vector<std::uint64_t> seq(hosts, 0);
  std::uint64_t results = 0;
  double store_ms = 0, writer_ms = 0, writer_max_ms = 0;
  std::size_t writer_events = 0;
  const auto apply = [&](const std::vector<EvidenceEvent>& events) {
    for (const EvidenceEvent& e : events) {
      const auto start = Clock::now();
      writer.Apply(e);
      const double ms = Ms(Clock::now() - start);
      writer_ms += ms;
      writer_max_ms = std::max(writer_max_ms, ms);
      ++writer_events;
    }
  };
  for (int w = 0; w < windows; ++w) {
    const std::int64_t start = t0 + std::int64_t{w} * 20 * kSecond;
    std::vector<v1::UploadBatch> batches(hosts);
    fleet.Probe(start, 20, faults, [&](const analysis::ProbeRecord& r) {
      analysis.AddResult(r);
      v1::ProbeResult& p = *batches[r.host].add_results();
      p.set_src_nic(r.src_nic);
      p.set_dst_nic(r.dst_nic);
      p.set_src_port(r.src_port);
      p.set_dst_port(r.dst_port);
      p.set_sequence(r.sequence);
      p.set_send_time_ns(r.send_time_ns);
      p.set_app_send_ns(r.t1_app_send_ns);
      p.set_nic_send_ns(r.t2_nic_send_ns);
      p.set_nic_recv_ns(r.t3_nic_recv_ns);
      p.set_app_recv_ns(r.t4_app_recv_ns);
      p.set_timeout(r.timeout);
      ++results;
    });
    const auto stored = Clock::now();
    for (std::uint32_t h = 0; h < hosts; ++h) {
      batches[h].set_agent_id(agent_of(h));
      batches[h].set_boot_id(1);
      batches[h].set_batch_seq(++seq[h]);
      if (store->Commit(store::Store::Prepare(batches[h])).status != store::CommitStatus::kStored) {
        std::fprintf(stderr, "commit failed\n");
        return 1;
      }
    }
    store_ms += Ms(Clock::now() - stored);
    clock.SetRealtime(WallTime{std::chrono::nanoseconds{start + 30 * kSecond}});
    for (const auto& report : analysis.Advance(start + 30 * kSecond)) {
      apply(keeper.OnWindow(report, incidents.Update(report), incidents, analysis.fabric(),
                            agent_of));
    }
    while (keeper.sampling() > 0) apply(keeper.Step(analysis.paths(), analysis.fabric(), agent_of));
  }
  std::vector<std::uint64_t> sizes;
  store->ScanEvidenceSizes([&](std::uint64_t, std::uint64_t bytes, WallTime) {
    sizes.push_back(bytes);
    return true;
  });
  std::sort(sizes.begin(), sizes.end());
  std::uint64_t total = 0;
  for (const std::uint64_t b : sizes) total += b;
  std::printf("fleet: %u hosts x 8 NICs, %d windows, %llu results stored in %.1f s\n", hosts,
              windows, static_cast<unsigned long long>(results), store_ms / 1e3);
  std::printf("incidents: %zu, %zu open; with evidence: %zu\n", incidents.all().size(),
              incidents.open().size(), sizes.size());
  if (!sizes.empty()) {
    std::printf("evidence per incident: median %.1f KB, max %.1f KB, mean %.1f KB\n",
                static_cast<double>(sizes[sizes.size() / 2]) / 1e3,
                static_cast<double>(sizes.back()) / 1e3,
                static_cast<double>(total) / static_cast<double>(sizes.size()) / 1e3);
  }
  std::printf(
      "evidence in all: %.1f MB of a %.0f MB cap (writer's count %.1f MB); dropped for "
      "the cap: %llu\n",
      static_cast<double>(total) / 1e6, static_cast<double>(config.disk_cap_bytes) / 1e6,
      static_cast<double>(writer.stats().bytes.load()) / 1e6,
      static_cast<unsigned long long>(writer.stats().dropped_disk_cap.load()));
  std::printf("writer: %zu events, %.1f ms mean, %.1f ms max (its own thread in the analyzer)\n",
              writer_events, writer_events ? writer_ms / static_cast<double>(writer_events) : 0.0,
              writer_max_ms);
  store.reset();
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace hostmesh::analyzer::evidence

int main(int argc, char** argv) {
  const auto hosts = static_cast<std::uint32_t>(argc > 1 ? std::atoi(argv[1]) : 1000);
  const int windows = argc > 2 ? std::atoi(argv[2]) : 9;
  const auto links = static_cast<std::uint32_t>(argc > 3 ? std::atoi(argv[3]) : 40);
  const auto rnics = static_cast<std::uint32_t>(argc > 4 ? std::atoi(argv[4]) : 60);
  return hostmesh::analyzer::evidence::Run(hosts, windows, links, rnics);
}
