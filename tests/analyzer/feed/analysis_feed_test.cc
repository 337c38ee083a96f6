// AnalysisFeed: batches into the analysis with names from the stored Hello;
// path reports resolved against an inventory (learned_feed_test.cc: without one).
#include "analyzer/feed/analysis_feed.h"

#include <gtest/gtest.h>

#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"

namespace hostmesh::analyzer::app {
namespace {

using analyzer::testing::MakeBatch;
using analyzer::testing::MakeHello;

struct Fixture {
  Fixture() {
    std::string error;
    store::StoreOptions options;
    options.data_dir = dir.path() / "db";
    store = store::Store::Open(clock, options, error);
    EXPECT_TRUE(store) << error;
  }
  analyzer::testing::TempDir dir;
  VirtualClock clock;
  std::unique_ptr<store::Store> store;
};

// The first host of a generated fabric and the IPs of its NICs, by rail.
std::vector<std::string> HostNicIps(const topology::Topology& topo) {
  std::vector<std::string> ips;
  for (const topology::Device& device : topo.devices()) {
    if (device.tier != topology::Tier::kHost) continue;
    for (topology::InterfaceId id : device.interfaces)
      ips.push_back(topo.interface(id).ip.ToString());
    break;
  }
  return ips;
}

v1::PathReport Path(const std::string& src, const std::string& dst, int silent_hops) {
  v1::PathReport path;
  path.set_src_ip(src);
  path.set_dst_ip(dst);
  path.set_src_nic(0);
  path.set_dst_nic(1);
  path.set_src_port(49152);
  path.set_dst_port(4791);
  for (int i = 0; i < silent_hops; ++i) path.add_hops()->set_ttl(static_cast<std::uint32_t>(i + 1));
  return path;
}

TEST(AnalysisFeed, NamesComeFromTheHelloAndASilentPathTeachesNothing) {
  Fixture f;
  v1::AgentHello hello = MakeHello("h1", 7, 4);
  hello.set_host("host-one");
  hello.mutable_nics(2)->set_ip("10.0.2.1");
  AnalysisFeed feed(*f.store, {}, nullptr);
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 40, f.clock.RealtimeNow());
  *batch.add_paths() = Path("10.0.0.1", "10.0.1.1", 3);
  feed.OnBatch(batch, hello);

  const auto& hosts = *feed.Hosts();
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].agent_id, "h1");
  EXPECT_EQ(hosts[0].host, "host-one");
  ASSERT_EQ(hosts[0].nics.size(), 4u);
  EXPECT_EQ(hosts[0].nics[2].name, "nic2");
  EXPECT_EQ(hosts[0].nics[2].ip, "10.0.2.1");
  EXPECT_EQ(hosts[0].nics[2].rail, 2);
  EXPECT_EQ(feed.analysis_stats().accepted, 40u);
  EXPECT_EQ(feed.stats().paths_unresolved, 1u);  // learned fabric: no hop answered
  EXPECT_EQ(feed.stats().paths_resolved, 0u);
}

// A batch's load-shedding state reaches the window its results are judged
// in, for that host only.
TEST(AnalysisFeed, AHostSheddingLoadIsNamedInItsWindows) {
  Fixture f;
  AnalysisFeed feed(*f.store, {}, nullptr);
  v1::UploadBatch shedding = MakeBatch("h1", 7, 1, 40, f.clock.RealtimeNow());
  v1::LoadShedding* s = shedding.mutable_load_shedding();
  s->set_rate_fraction(0.25);
  s->set_since_ns(f.clock.RealtimeNow().time_since_epoch().count());
  s->set_cause("cgroup cpu throttled 96%");
  s->set_signal("cgroup_throttled");
  feed.OnBatch(shedding, MakeHello("h1", 7, 4));
  v1::UploadBatch full = MakeBatch("h2", 8, 1, 40, f.clock.RealtimeNow());
  full.mutable_load_shedding()->set_rate_fraction(1.0);
  feed.OnBatch(full, MakeHello("h2", 8, 4));
  const std::vector<analysis::WindowReport> reports =
      feed.Advance((f.clock.RealtimeNow() + std::chrono::minutes{5}).time_since_epoch().count());
  const analysis::WindowReport* judged = nullptr;
  for (const analysis::WindowReport& r : reports) {
    if (r.results > 0) judged = &r;
  }
  ASSERT_NE(judged, nullptr);
  ASSERT_EQ(judged->shedding.size(), 1u);
  EXPECT_EQ(feed.AgentOf(judged->shedding[0].host), "h1");
  EXPECT_DOUBLE_EQ(judged->shedding[0].rate_fraction, 0.25);
  EXPECT_EQ(judged->shedding[0].cause, "cgroup cpu throttled 96%");
  EXPECT_TRUE(judged->shedding[0].cpu) << "cgroup_throttled is a CPU signal";
}

TEST(AnalysisFeed, PathsResolveThroughTheInventoryAndBadOnesAreCounted) {
  Fixture f;
  const topology::Topology topo =
      topology::BuildTopology(topology::GenerateInventory({.hosts = 2, .rails = 2, .spines = 2}));
  const std::vector<std::string> ips = HostNicIps(topo);
  ASSERT_EQ(ips.size(), 2u);
  const v1::AgentHello hello = MakeHello("h1", 7, 2);
  AnalysisFeed feed(*f.store, {}, &topo);
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 0, f.clock.RealtimeNow());
  // Silent switches, then the destination's answer: ambiguous, still usable.
  v1::PathReport reached = Path(ips[0], ips[1], 3);
  reached.add_hops()->set_address(ips[1]);
  *batch.add_paths() = reached;
  // No answer at all: cut short where it began, so it resolves to nothing.
  *batch.add_paths() = Path(ips[0], ips[1], 3);
  *batch.add_paths() = Path("not-an-ip", ips[1], 3);
  feed.OnBatch(batch, hello);
  EXPECT_EQ(feed.stats().paths_resolved, 1u);
  EXPECT_EQ(feed.stats().paths_cut_short, 1u);
  EXPECT_EQ(feed.stats().paths_unresolved, 1u);
  EXPECT_EQ(feed.stats().paths_disagreeing, 0u);  // a bad report is no evidence
}

// Ingest only queues; the analysis sees the results when the loop drains the
// queue. A stalled loop costs results beyond the bound, counted, never memory.
TEST(AnalysisFeed, IngestQueuesAndABoundedQueueDropsAndCounts) {
  Fixture f;
  const v1::AgentHello hello = MakeHello("h1", 7, 4);
  AnalysisFeed feed(*f.store, {}, nullptr, /*max_queued_results=*/100);
  feed.OnBatch(MakeBatch("h1", 7, 1, 60, f.clock.RealtimeNow()), hello);
  feed.OnBatch(MakeBatch("h1", 7, 2, 60, f.clock.RealtimeNow()), hello);  // 40 of it over the bound
  EXPECT_EQ(feed.stats().queue_dropped, 20u);
  EXPECT_EQ(feed.analysis_stats().accepted, 100u);                        // drained
  feed.OnBatch(MakeBatch("h1", 7, 3, 60, f.clock.RealtimeNow()), hello);  // room again
  EXPECT_EQ(feed.analysis_stats().accepted, 160u);
  EXPECT_EQ(feed.stats().queue_dropped, 20u);
}

// One agent reporting ever more 5-tuples (a hostile one, or a pool far larger
// than configured) holds at most max_paths_per_host of them; another agent's
// paths are all kept.
TEST(AnalysisFeed, AnAgentReportingEndlessPathsHoldsItsCapAndNoOtherIsHeldBack) {
  Fixture f;
  const topology::Topology topo =
      topology::BuildTopology(topology::GenerateInventory({.hosts = 2, .rails = 2, .spines = 2}));
  const std::vector<std::string> ips = HostNicIps(topo);
  ASSERT_EQ(ips.size(), 2u);
  analysis::AnalysisConfig config;
  config.max_paths_per_host = 1'024;
  AnalysisFeed feed(*f.store, config, &topo);
  const auto reports = [&](const std::string& agent, std::uint64_t boot, int ports) {
    v1::UploadBatch batch = MakeBatch(agent, boot, 1, 0, f.clock.RealtimeNow());
    for (int i = 0; i < ports; ++i) {
      v1::PathReport path = Path(ips[0], ips[1], 3);
      path.set_src_port(static_cast<std::uint32_t>(1'024 + i));
      path.add_hops()->set_address(ips[1]);
      *batch.add_paths() = path;
    }
    return batch;
  };
  feed.OnBatch(reports("h1", 7, 1'100), MakeHello("h1", 7, 2));
  feed.OnBatch(reports("h2", 8, 10), MakeHello("h2", 8, 2));
  feed.Advance(f.clock.RealtimeNow().time_since_epoch().count());
  EXPECT_EQ(feed.stats().paths_resolved, 1'110u);
  EXPECT_EQ(feed.analysis_stats().paths_refused_host_cap, 76u);
  EXPECT_EQ(feed.analysis_stats().paths_live, 1'024u + 10u);
}

}  // namespace
}  // namespace hostmesh::analyzer::app
