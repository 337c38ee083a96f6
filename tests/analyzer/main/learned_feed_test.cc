// AnalysisFeed without an inventory: the fabric learned from the path reports
// of a generated fabric (which the feed never sees), a gray link localized on
// what was learned and named by its addresses, the learned fabric carried over
// a restart through the store; and with an inventory that is wrong about the
// fabric, the places where the traces contradict it.
#include <gtest/gtest.h>

#include <set>

#include "analyzer/main/analysis_feed.h"
#include "analyzer/state/learned_fabric_codec.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"
#include "tests/topology/inventory_edits.h"
#include "topology/ecmp.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"

namespace hostmesh::analyzer::app {
namespace {

using namespace std::chrono_literals;
using topology::Hop;
using topology::Ipv4;
using topology::LinkId;

constexpr topology::FabricShape kShape{.hosts = 1, .rails = 4, .spines = 4};
constexpr int kRails = 4;
constexpr int kPorts = 16;                               // per NIC pair: every ECMP path four times
constexpr int kProbes = 4;                               // per port and batch
constexpr std::int64_t kT0 = 1'700'000'000'000'000'000;  // a window start

analysis::AnalysisConfig Config() {
  analysis::AnalysisConfig config;
  config.window = 10s;
  config.grace = 2s;
  return config;
}

struct Fixture {
  Fixture() {
    std::string error;
    store::StoreOptions options;
    options.data_dir = dir.path() / "db";
    store = store::Store::Open(clock, options, error);
    EXPECT_TRUE(store) << error;
    v1::AgentHello hello = analyzer::testing::MakeHello("h1", 7, kRails);
    for (int r = 0; r < kRails; ++r) hello.mutable_nics(r)->set_ip(Nic(r).ToString());
    EXPECT_TRUE(store->PutHello(hello).ok());
  }

  Ipv4 Nic(int rail) const {
    const topology::Device& host = truth.device(0);
    return truth.interface(host.interfaces[static_cast<std::size_t>(rail)]).ip;
  }
  LinkId Link(const std::string& inventory_name) const {
    for (LinkId id = 0; id < truth.links().size(); ++id) {
      if (truth.link(id).name == inventory_name) return id;
    }
    ADD_FAILURE() << "no link " << inventory_name;
    return topology::kNone;
  }
  // The addresses of a link of the truth, lower end first: how a learned fabric names it.
  std::string AddressName(LinkId id) const {
    return truth.interface(truth.link(id).lower).ip.ToString() + "-" +
           truth.interface(truth.link(id).upper).ip.ToString();
  }

  // Every NIC pair and port: the path report as a trace would see it with
  // `gray` eating every probe that crosses it (answers up to the link, then
  // silence), and kProbes results, timed out when their path crosses `gray`.
  v1::UploadBatch Batch(std::uint64_t seq, std::int64_t t, LinkId gray) const {
    v1::UploadBatch batch = analyzer::testing::MakeBatch("h1", 7, seq, 0, WallTime{});
    std::uint64_t sequence = seq * 100'000;
    for (int a = 0; a < kRails; ++a) {
      for (int b = 0; b < kRails; ++b) {
        if (a == b) continue;
        const auto paths = topology::EnumerateEcmpPaths(truth, Nic(a), Nic(b));
        for (int p = 0; p < kPorts; ++p) {
          const auto& path = paths[static_cast<std::size_t>(p) % paths.size()];
          const auto cut = std::find(path.begin(), path.end(), gray);
          std::vector<Hop> hops = topology::ExpectedHops(truth, path, Nic(a));
          if (cut == path.end()) {
            hops.emplace_back(Nic(b));
          } else {
            hops.resize(static_cast<std::size_t>(cut - path.begin()));
            hops.insert(hops.end(), 3, std::nullopt);
          }
          v1::PathReport* report = batch.add_paths();
          report->set_src_ip(Nic(a).ToString());
          report->set_dst_ip(Nic(b).ToString());
          report->set_src_nic(static_cast<std::uint32_t>(a));
          report->set_dst_nic(static_cast<std::uint32_t>(b));
          report->set_src_port(static_cast<std::uint32_t>(49152 + p));
          report->set_dst_port(4791);
          report->set_time_ns(t);
          for (const Hop& hop : hops) {
            report->add_hops()->set_address(hop ? hop->ToString() : "");
          }
          for (int i = 0; i < kProbes; ++i) {
            v1::ProbeResult* r = batch.add_results();
            r->set_src_nic(static_cast<std::uint32_t>(a));
            r->set_dst_nic(static_cast<std::uint32_t>(b));
            r->set_src_port(static_cast<std::uint32_t>(49152 + p));
            r->set_dst_port(4791);
            r->set_sequence(++sequence);
            const std::int64_t at = t + static_cast<std::int64_t>(sequence % 1000) * 1'000'000;
            r->set_send_time_ns(at);
            r->set_app_send_ns(at);
            if (cut != path.end()) {
              r->set_timeout(true);
              continue;
            }
            r->set_nic_send_ns(at + 1000);
            r->set_nic_recv_ns(at + 6000);
            r->set_app_recv_ns(at + 9000);
          }
        }
      }
    }
    return batch;
  }

  // Judges the window starting at `start` (and any before it).
  std::vector<analysis::WindowReport> Judge(AnalysisFeed& feed, std::int64_t start) const {
    return feed.Advance(start + (Config().window + Config().grace + 1s).count());
  }

  analyzer::testing::TempDir dir;
  VirtualClock clock;
  std::unique_ptr<store::Store> store;
  topology::Topology truth = topology::BuildTopology(topology::GenerateInventory(kShape));
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
  feed.OnBatch(f.Batch(1, kT0 + 1'000'000'000, topology::kNone));
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
  feed.OnBatch(f.Batch(2, kT0 + window + 1'000'000'000, gray));
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
    feed.OnBatch(f.Batch(1, kT0 + 1'000'000'000, topology::kNone));
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
  restarted.OnBatch(batch);
  f.Judge(restarted, kT0);
  std::uint64_t version = 0;
  EXPECT_EQ(LinkNames(*restarted.LearnedView(&version)), before);
  EXPECT_EQ(restarted.stats().paths_resolved, 12u * kPorts);
}

TEST(LearnedFeed, TracesThatContradictTheInventoryAreKeptByPlaceAndCounted) {
  Fixture f;
  topology::Inventory wrong = topology::GenerateInventory(kShape);
  topology::testing::SwapUpperEnds(wrong, "p0r0-s00", "p0r1-s01");
  const topology::Topology inventory = topology::BuildTopology(wrong);
  AnalysisFeed feed(*f.store, Config(), &inventory);
  feed.OnBatch(f.Batch(1, kT0 + 1'000'000'000, topology::kNone));

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

}  // namespace
}  // namespace hostmesh::analyzer::app
