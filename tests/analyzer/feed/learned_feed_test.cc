// AnalysisFeed without an inventory: the fabric learned from the path reports
// of a generated fabric (which the feed never sees), a gray link localized on
// what was learned and named by its addresses, the learned fabric carried over
// a restart through the store; and with an inventory that is wrong about the
// fabric, the places where the traces contradict it.
#include <gtest/gtest.h>

#include <set>

#include "analyzer/feed/analysis_feed.h"
#include "analyzer/state/learned_fabric_codec.h"
#include "tests/analyzer/feed/traced_fabric.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/topology/inventory_edits.h"

namespace hostmesh::analyzer::app {
namespace {

using namespace std::chrono_literals;
using topology::LinkId;

constexpr auto kShape = analyzer::testing::TracedFabric::kShape;
constexpr int kPorts = analyzer::testing::TracedFabric::kPorts;
constexpr std::int64_t kT0 = 1'700'000'000'000'000'000;  // a window start

analysis::AnalysisConfig Config() {
  analysis::AnalysisConfig config;
  config.window = 10s;
  config.grace = 2s;
  return config;
}

struct Fixture : analyzer::testing::TracedFabric {
  Fixture() {
    std::string error;
    store::StoreOptions options;
    options.data_dir = dir.path() / "db";
    store = store::Store::Open(clock, options, error);
    EXPECT_TRUE(store) << error;
    EXPECT_TRUE(store->PutHello(Hello()).ok());
  }

  // Judges the window starting at `start` (and any before it).
  std::vector<analysis::WindowReport> Judge(AnalysisFeed& feed, std::int64_t start) const {
    return feed.Advance(start + (Config().window + Config().grace + 1s).count());
  }

  analyzer::testing::TempDir dir;
  VirtualClock clock;
  std::unique_ptr<store::Store> store;
};

std::vector<std::string> LinkNames(const api::InventoryView& view) {
  std::vector<std::string> names;
  for (const api::LinkInfo& l : view.links) names.push_back(l.name);
  return names;
}

TEST(LearnedFeed, LearnsTheFabricAndLocalizesAGrayLinkNamedByItsAddresses) {
  Fixture f;
  AnalysisFeed feed(*f.store, Config(), nullptr);
  const std::int64_t window = Config().window.count();
  feed.OnBatch(f.Batch(1, kT0 + 1'000'000'000, topology::kNone), f.Hello());
  auto reports = f.Judge(feed, kT0);
  ASSERT_FALSE(reports.empty());
  EXPECT_TRUE(reports.back().loss.culprits.empty());

  // Every link of the fabric, by its addresses; the switches by an address each.
  std::uint64_t version = 0;
  const auto view = feed.LearnedView(&version);
  ASSERT_TRUE(view);
  EXPECT_GT(version, 0u);
  std::set<std::string> expected;
  for (LinkId id = 0; id < f.truth.links().size(); ++id) expected.insert(f.AddressName(id));
  const std::vector<std::string> names = LinkNames(*view);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), expected);
  std::set<std::string> switches;
  for (const api::LinkInfo& l : view->links) {
    if (l.kind == "fabric") switches.insert({l.lower.device, l.upper.device});
  }
  EXPECT_EQ(switches.size(), 8u);  // 4 rail switches, 4 spines
  for (const std::string& s : switches) EXPECT_TRUE(topology::ParseIpv4(s)) << s;
  EXPECT_EQ(feed.stats().paths_resolved, 12u * kPorts);

  // The rail-to-spine link p0r0-s00 eats every probe that crosses it, and the traces.
  const LinkId gray = f.Link("p0r0-s00");
  feed.OnBatch(f.Batch(2, kT0 + window + 1'000'000'000, gray), f.Hello());
  reports = f.Judge(feed, kT0 + window);
  ASSERT_FALSE(reports.empty());
  const analysis::Localization& loss = reports.back().loss;
  ASSERT_FALSE(loss.culprits.empty());
  const analysis::Component& blamed = loss.culprits[0].component;
  ASSERT_EQ(blamed.kind, analysis::Component::Kind::kLink);
  const auto now = feed.LearnedView(&version);
  ASSERT_LT(blamed.link, now->links.size());
  EXPECT_EQ(now->links[blamed.link].name, f.AddressName(gray));
  EXPECT_EQ(loss.culprits.size(), 1u);
  EXPECT_TRUE(loss.culprit_switches.empty());
  // Up through the link a trace stops at p0r0 (any spine may follow: the
  // previous path stands); down, the learned graph has one way on.
  EXPECT_EQ(feed.stats().paths_cut_short, 3u * kPorts / 4);
  EXPECT_EQ(feed.stats().paths_resolved, 12u * kPorts + 12u * kPorts - 3u * kPorts / 4);
}

TEST(LearnedFeed, TheLearnedFabricKeepsItsIdsOverARestartThroughTheStore) {
  Fixture f;
  std::vector<std::string> before;
  {
    AnalysisFeed feed(*f.store, Config(), nullptr);
    feed.OnBatch(f.Batch(1, kT0 + 1'000'000'000, topology::kNone), f.Hello());
    f.Judge(feed, kT0);
    const auto learned = feed.LearnedChangedSince(0);
    ASSERT_TRUE(learned);
    EXPECT_FALSE(feed.LearnedChangedSince(learned->first));  // nothing new since
    ASSERT_TRUE(f.store->PutLearnedFabric(state::EncodeLearnedFabric(learned->second)).ok());
    std::uint64_t version = 0;
    before = LinkNames(*feed.LearnedView(&version));
  }
  AnalysisFeed restarted(*f.store, Config(), nullptr);
  const auto bytes = f.store->GetLearnedFabric();
  ASSERT_TRUE(bytes);
  const auto state = state::DecodeLearnedFabric(*bytes);
  ASSERT_TRUE(state);
  std::string error;
  ASSERT_TRUE(restarted.RestoreLearned(*state, &error)) << error;
  // Traces in another order than the first run's change nothing.
  v1::UploadBatch batch = f.Batch(1, kT0 + 1'000'000'000, topology::kNone);
  std::reverse(batch.mutable_paths()->begin(), batch.mutable_paths()->end());
  restarted.OnBatch(batch, f.Hello());
  f.Judge(restarted, kT0);
  std::uint64_t version = 0;
  EXPECT_EQ(LinkNames(*restarted.LearnedView(&version)), before);
  EXPECT_EQ(restarted.stats().paths_resolved, 12u * kPorts);
}

TEST(LearnedFeed, TheGraphIsRebuiltAtMostOnceASecondWhileLearning) {
  const analyzer::testing::TracedFabric fabric;
  LearnedTopology learned;
  EXPECT_FALSE(learned.Refresh(kT0));  // nothing learned: nothing to hand out
  learned.AddHello("h1", fabric.Hello());
  analysis::PathRecord path;
  const v1::UploadBatch batch = fabric.Batch(1, kT0, topology::kNone);
  for (const v1::PathReport& report : batch.paths()) {
    learned.Convert(0, "h1", report, path);
  }
  const auto first = learned.Refresh(kT0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->links().size(), fabric.truth.links().size());
  EXPECT_FALSE(learned.Refresh(kT0 + 1));  // nothing new

  v1::AgentHello renamed = fabric.Hello();
  renamed.mutable_nics(0)->set_name("eth0");
  learned.AddHello("h1", renamed);
  EXPECT_FALSE(learned.Refresh(kT0 + 999'999'999));  // changed, but built a moment ago
  const auto second = learned.Refresh(kT0 + 1'000'000'000);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->interface(second->FindInterface(fabric.Nic(0))).name, "eth0");
}

TEST(LearnedFeed, TracesThatContradictTheInventoryAreKeptByPlaceAndCounted) {
  Fixture f;
  topology::Inventory wrong = topology::GenerateInventory(kShape);
  topology::testing::SwapUpperEnds(wrong, "p0r0-s00", "p0r1-s01");
  const topology::Topology inventory = topology::BuildTopology(wrong);
  AnalysisFeed feed(*f.store, Config(), &inventory);
  feed.OnBatch(f.Batch(1, kT0 + 1'000'000'000, topology::kNone), f.Hello());

  // Every trace crossing one of the two links, either way.
  EXPECT_EQ(feed.stats().paths_disagreeing, 4u * 3 * kPorts / 4);
  EXPECT_EQ(feed.stats().paths_unresolved, feed.stats().paths_disagreeing);
  const auto traces = feed.DisagreeingTraces();
  EXPECT_EQ(traces[static_cast<std::size_t>(topology::DisagreementKind::kMiscabledLink)],
            feed.stats().paths_disagreeing);
  const auto places = feed.Disagreements();
  ASSERT_TRUE(places);
  ASSERT_FALSE(places->empty());
  std::uint64_t counted = 0;
  for (const api::TopologyDisagreement& d : *places) {
    EXPECT_EQ(d.kind, "miscabled_link");
    EXPECT_GE(d.traces, DisagreementBook::kConfirmingTraces);
    EXPECT_EQ(d.agent_id, "h1");
    counted += d.traces;
  }
  EXPECT_EQ(counted, feed.stats().paths_disagreeing);
  // Up p0r0 -> s00: s00's port, which the inventory cables to p0r1.
  EXPECT_TRUE(std::any_of(places->begin(), places->end(), [](const auto& d) {
    return d.description.starts_with("traffic that reached p0r0 (hop 1) next entered s00:") &&
           d.description.find("which the inventory cables to p0r1:") != std::string::npos;
  }));
}

// A route that changes between a trace's probes mixes two paths: such a
// trace contradicts a right inventory, but the traces that agree with it at
// the same place outnumber it, so nothing is reported.
TEST(LearnedFeed, TracesMixingTwoPathsDoNotMakeARightInventoryWrong) {
  Fixture f;
  AnalysisFeed feed(*f.store, Config(), &f.truth);
  const auto paths = topology::EnumerateEcmpPaths(f.truth, f.Nic(0), f.Nic(1));
  const auto a = topology::ExpectedHops(f.truth, paths[0], f.Nic(0));
  const auto b = topology::ExpectedHops(f.truth, paths[1], f.Nic(0));
  v1::UploadBatch mixed = f.Batch(1, kT0, topology::kNone);
  mixed.clear_results();
  mixed.mutable_paths()->DeleteSubrange(1, mixed.paths_size() - 1);
  v1::PathReport& report = *mixed.mutable_paths(0);
  report.set_src_ip(f.Nic(0).ToString());
  report.set_dst_ip(f.Nic(1).ToString());
  report.clear_hops();
  for (const topology::Hop& hop : {a[0], a[1], b[2]})
    report.add_hops()->set_address(hop->ToString());

  feed.OnBatch(mixed, f.Hello());  // the place is in doubt from now on
  feed.OnBatch(f.Batch(2, kT0 + 1'000'000'000, topology::kNone), f.Hello());
  mixed.set_batch_seq(3);
  feed.OnBatch(mixed, f.Hello());
  EXPECT_EQ(feed.stats().paths_disagreeing, 2u);
  EXPECT_TRUE(feed.Disagreements()->empty());
}

}  // namespace
}  // namespace hostmesh::analyzer::app
