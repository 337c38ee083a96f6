// FindDisagreement: traces of the real fabric (a generated one) checked
// against an inventory that is wrong about it, and against a right one.
#include "topology/trace_check.h"

#include <gtest/gtest.h>

#include "tests/topology/inventory_edits.h"
#include "tests/topology/test_fabrics.h"
#include "topology/ecmp.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"

namespace hostmesh::topology {
namespace {

using testing::NicIp;

constexpr FabricShape kShape{.hosts = 2, .rails = 2, .spines = 2};

class TraceCheckTest : public ::testing::Test {
 protected:
  // Every trace of the truth's host 0, NIC 0 to NIC 1 and back: its first disagreement.
  std::vector<TraceDisagreement> Check(const Topology& inventory) {
    std::vector<TraceDisagreement> out;
    for (auto [a, b] : {std::pair{0, 1}, std::pair{1, 0}}) {
      const Ipv4 src = NicIp(truth_, 0, a);
      const Ipv4 dst = NicIp(truth_, 0, b);
      for (const auto& path : EnumerateEcmpPaths(truth_, src, dst)) {
        std::vector<Hop> hops = ExpectedHops(truth_, path, src);
        hops.emplace_back(dst);
        if (auto d = FindDisagreement(inventory, src, dst, hops)) out.push_back(*d);
      }
    }
    return out;
  }

  Topology truth_ = BuildTopology(GenerateInventory(kShape));
};

TEST_F(TraceCheckTest, ARightInventoryHasNothingToSay) {
  EXPECT_TRUE(Check(truth_).empty());
  // Silence, a trace cut short and an inferred destination are no evidence.
  const Ipv4 src = NicIp(truth_, 0, 0);
  const Ipv4 dst = NicIp(truth_, 0, 1);
  std::vector<Hop> hops = ExpectedHops(truth_, EnumerateEcmpPaths(truth_, src, dst)[0], src);
  EXPECT_FALSE(FindDisagreement(truth_, src, dst, std::vector<Hop>{hops[0], hops[1], dst}));
  EXPECT_FALSE(FindDisagreement(truth_, src, dst, std::vector<Hop>{hops[0], {}, {}, {}}));
}

TEST_F(TraceCheckTest, AMiscabledLinkIsNamedWithBothEnds) {
  Inventory inv = GenerateInventory(kShape);
  testing::SwapUpperEnds(inv, "p0r0-s00", "p0r1-s01");
  const Topology wrong = BuildTopology(inv);
  const std::vector<TraceDisagreement> found = Check(wrong);
  ASSERT_FALSE(found.empty());
  for (const TraceDisagreement& d : found) {
    EXPECT_EQ(d.kind, DisagreementKind::kMiscabledLink) << d.description;
  }
  // Up p0r0 -> s00: s00's port answers, which the wrong inventory cables to p0r1.
  const auto up = std::find_if(found.begin(), found.end(), [](const TraceDisagreement& d) {
    return d.description.starts_with("traffic that reached p0r0 ");
  });
  ASSERT_NE(up, found.end());
  EXPECT_EQ(up->key, "198.19.0.1<p0r0");
  EXPECT_EQ(up->where, *ParseIpv4("198.19.0.1"));
  EXPECT_EQ(up->description,
            "traffic that reached p0r0 (hop 1) next entered s00:p0r0 (198.19.0.1), which the "
            "inventory cables to p0r1:s01 (198.19.0.6), not to p0r0");
}

TEST_F(TraceCheckTest, ALinkMissingFromTheInventoryIsAnUnknownAddress) {
  Inventory inv = GenerateInventory(kShape);
  testing::RemoveLink(inv, "p0r0-s00");
  const std::vector<TraceDisagreement> found = Check(BuildTopology(inv));
  ASSERT_EQ(found.size(), 2u);  // up from p0r0 through s00, and down to it
  for (const TraceDisagreement& d : found) {
    EXPECT_EQ(d.kind, DisagreementKind::kUnknownAddress) << d.description;
    EXPECT_NE(d.description.find("an address the inventory does not have"), std::string::npos);
  }
}

TEST_F(TraceCheckTest, ANicOnAnotherPortIsMiscabled) {
  // The inventory has NIC 0 of h000 where the fabric has h001's, and the other way round.
  Inventory inv = GenerateInventory(kShape);
  std::swap(inv.hosts[0].nics[0].ip, inv.hosts[1].nics[0].ip);
  for (InventoryLink& l : inv.links) {
    if (l.name == "h000.nic0-p0r0" || l.name == "h001.nic0-p0r0") l.subnet.clear();
  }
  for (InventoryLink& l : inv.links) {
    if (l.name == "h000.nic0-p0r0") l.a.ip = inv.hosts[0].nics[0].ip;
    if (l.name == "h001.nic0-p0r0") l.a.ip = inv.hosts[1].nics[0].ip;
  }
  for (InventoryInterface& port : inv.switches[0].interfaces) {
    if (port.peer == "h000") port.peer_ip = inv.hosts[0].nics[0].ip;
    if (port.peer == "h001") port.peer_ip = inv.hosts[1].nics[0].ip;
  }
  const std::vector<TraceDisagreement> found = Check(BuildTopology(inv));
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found[0].kind, DisagreementKind::kMiscabledNic);
  EXPECT_EQ(found[0].key, NicIp(truth_, 0, 0).ToString());
  EXPECT_NE(found[0].description.find("is cabled to p0r0:"), std::string::npos)
      << found[0].description;
}

TEST_F(TraceCheckTest, ATraceVouchesForTheAnswersThatFollowAnAnswer) {
  const Ipv4 src = NicIp(truth_, 0, 0);
  const Ipv4 a{1}, b{2}, c{3};
  EXPECT_EQ(AgreeingAddresses(src, std::vector<Hop>{a, b, std::nullopt, c}),
            (std::vector<Ipv4>{src, b}));
  EXPECT_EQ(AgreeingAddresses(src, std::vector<Hop>{std::nullopt, b, c}), (std::vector<Ipv4>{c}));
}

TEST_F(TraceCheckTest, AProbingNicTheInventoryLacks) {
  const Ipv4 src{NicIp(truth_, 0, 0).value + 1000};
  const auto d = FindDisagreement(truth_, src, NicIp(truth_, 0, 1), std::vector<Hop>{});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, DisagreementKind::kUnknownNic);
  EXPECT_EQ(DisagreementKindName(d->kind), "unknown_nic");
}

}  // namespace
}  // namespace hostmesh::topology
