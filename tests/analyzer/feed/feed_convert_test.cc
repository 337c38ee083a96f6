// Path reports resolved on an inventory (feed_convert.h), as the analyzer's
// feed and the fleet simulator resolve them: whole traces, traces a gray link
// cut short, and traces whose answers contradict the inventory.
#include "analyzer/feed/feed_convert.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "topology/ecmp.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"

namespace hostmesh::analyzer::app {
namespace {

using topology::Hop;
using topology::Ipv4;
using topology::LinkId;

class FeedConvertTest : public ::testing::Test {
 protected:
  Ipv4 Nic(int rail) const {
    const topology::Device& host = topo_.device(0);
    return topo_.interface(host.interfaces[static_cast<std::size_t>(rail)]).ip;
  }
  // A path from NIC 0 to NIC 1: NIC link, climb, descend, NIC link.
  std::vector<LinkId> Path(std::size_t which = 0) const {
    return topology::EnumerateEcmpPaths(topo_, Nic(0), Nic(1)).at(which);
  }
  std::vector<Hop> HopsOf(const std::vector<LinkId>& path) const {
    return topology::ExpectedHops(topo_, path, Nic(0));
  }
  v1::PathReport Report(const std::vector<Hop>& hops) const {
    v1::PathReport report;
    report.set_src_ip(Nic(0).ToString());
    report.set_dst_ip(Nic(1).ToString());
    report.set_src_nic(0);
    report.set_dst_nic(1);
    report.set_src_port(49152);
    report.set_dst_port(4791);
    report.set_time_ns(1'000);
    for (const Hop& hop : hops) report.add_hops()->set_address(hop ? hop->ToString() : "");
    return report;
  }
  PathConversion Convert(const std::vector<Hop>& hops) {
    out_ = {};
    return ToPathRecord(3, Report(hops), resolver_, scratch_, out_);
  }

  topology::Topology topo_ = topology::BuildTopology(
      topology::GenerateInventory(topology::FabricShape{.hosts = 1, .rails = 4, .spines = 4}));
  topology::PathResolver resolver_{topo_};
  topology::ResolvedPath scratch_;
  analysis::PathRecord out_;
};

TEST_F(FeedConvertTest, AWholeTraceResolvesToItsLinks) {
  const std::vector<LinkId> path = Path();
  std::vector<Hop> hops = HopsOf(path);
  hops.emplace_back(Nic(1));  // the destination's own answer
  ASSERT_EQ(Convert(hops), PathConversion::kResolved);
  EXPECT_EQ(out_.links, path);
  EXPECT_EQ(out_.host, 3u);
  EXPECT_EQ(out_.src_nic, 0u);
  EXPECT_EQ(out_.dst_nic, 1u);
  EXPECT_EQ(out_.src_port, 49152u);
}

// A gray link on the way down eats what crosses it: the trace answers up to
// the spine, then the tracer infers the destination (or gives up in silence).
// One way leads on from that spine to the destination's rail switch, so the
// path is whole again, the gray link on it.
TEST_F(FeedConvertTest, ATraceCutShortOnTheWayDownIsContinuedToTheGrayLink) {
  const std::vector<LinkId> path = Path();
  std::vector<Hop> hops = HopsOf(path);
  hops.resize(2);  // answers from the rail switch and the spine; link 2 is gray

  std::vector<Hop> inferred = hops;
  inferred.emplace_back(Nic(1));
  ASSERT_EQ(Convert(inferred), PathConversion::kContinued);
  EXPECT_EQ(out_.links, path);

  std::vector<Hop> silent = hops;
  silent.insert(silent.end(), 3, std::nullopt);
  ASSERT_EQ(Convert(silent), PathConversion::kContinued);
  EXPECT_EQ(out_.links, path);
}

// On the way up every spine fits: the path holds what the trace answered,
// and every way on as candidates (the path table keeps an earlier whole path
// of the 5-tuple where it fits).
TEST_F(FeedConvertTest, ATraceCutShortOnTheWayUpListsEveryWayOn) {
  const std::vector<LinkId> path = Path();
  std::vector<Hop> hops = HopsOf(path);
  hops.resize(1);  // the rail switch answered; the link to the spine is gray
  std::vector<Hop> inferred = hops;
  inferred.emplace_back(Nic(1));
  EXPECT_EQ(Convert(inferred), PathConversion::kCutShort);
  hops.insert(hops.end(), 3, std::nullopt);
  ASSERT_EQ(Convert(hops), PathConversion::kCutShort);
  ASSERT_EQ(out_.links.size(), path.size());
  EXPECT_EQ(out_.links.front(), path.front());
  EXPECT_EQ(out_.links[1], analysis::kUnknown);
  std::vector<LinkId> ups, downs;
  for (const analysis::PathCandidate& c : out_.candidates) {
    (c.position == 1 ? ups : downs).push_back(c.link);
  }
  EXPECT_EQ(ups.size(), 4u);  // one per spine
  EXPECT_NE(std::find(ups.begin(), ups.end(), path[1]), ups.end());
  if (out_.links[2] == analysis::kUnknown) {
    EXPECT_NE(std::find(downs.begin(), downs.end(), path[2]), downs.end());
  }
}

// A trace that reached its destination past a silent spine (a switch's ICMP
// rate limit) is a working path: the silent position stays unknown, with no
// candidates to spread its failures over.
TEST_F(FeedConvertTest, AWholeTraceWithASilentHopListsNoCandidates) {
  const std::vector<LinkId> path = Path();
  std::vector<Hop> hops = HopsOf(path);
  hops[1] = hops[2] = std::nullopt;  // the spine and the next rail switch stayed silent
  hops.emplace_back(Nic(1));
  ASSERT_EQ(Convert(hops), PathConversion::kResolved);
  EXPECT_EQ(out_.links.front(), path.front());
  EXPECT_EQ(out_.links[1], analysis::kUnknown);
  EXPECT_TRUE(out_.candidates.empty());
}

// Trailing silence is no switch: a trace that never reached the destination
// is resolved on its answers, not on as many hops as it waited for.
TEST_F(FeedConvertTest, ASilentTailIsNotTakenForSwitches) {
  const std::vector<LinkId> path = Path();
  std::vector<Hop> hops = HopsOf(path);  // every switch answered, the destination did not
  hops.insert(hops.end(), 2, std::nullopt);
  ASSERT_EQ(Convert(hops), PathConversion::kContinued);
  EXPECT_EQ(out_.links, path);
}

// Answers that contradict the inventory are never continued: the spine
// answers from its port to another rail switch than the one before it.
TEST_F(FeedConvertTest, AnswersThatContradictTheInventoryStayUnresolved) {
  const std::vector<LinkId> path = Path();
  std::vector<Hop> hops = HopsOf(path);
  const topology::Link& climb = topo_.link(path[1]);
  const topology::DeviceId spine = topo_.DeviceOf(climb.upper);
  std::optional<Ipv4> wrong;
  for (const topology::InterfaceId itf : topo_.device(spine).interfaces) {
    if (itf != climb.upper && topo_.interface(itf).link != topology::kNone) {
      wrong = topo_.interface(itf).ip;
      break;
    }
  }
  ASSERT_TRUE(wrong.has_value());
  hops[1] = *wrong;
  hops.resize(2);
  hops.emplace_back(Nic(1));  // inferred right after the contradicting answer
  EXPECT_EQ(Convert(hops), PathConversion::kUnresolved);
}

TEST_F(FeedConvertTest, BadAddressesAreUnresolved) {
  v1::PathReport report = Report(HopsOf(Path()));
  report.set_src_ip("not an address");
  EXPECT_EQ(ToPathRecord(0, report, resolver_, scratch_, out_), PathConversion::kUnresolved);
}

}  // namespace
}  // namespace hostmesh::analyzer::app
