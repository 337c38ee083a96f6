#include "topology/generator.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "tests/topology/test_fabrics.h"
#include "topology/inventory_loader.h"
#include "topology/inventory_writer.h"

namespace hostmesh::topology {
namespace {

using testing::FabricTopologyOutput;
using testing::GeneratedText;
using testing::WithoutHeader;

struct Size {
  int hosts, rails, spines, pods;
};

class GeneratorMatchesTestbed : public ::testing::TestWithParam<Size> {};

// Byte for byte, below the header comment that names the tool.
TEST_P(GeneratorMatchesTestbed, SameInventoryText) {
  const Size s = GetParam();
  const std::string testbed = FabricTopologyOutput(s.hosts, s.rails, s.spines, s.pods);
  ASSERT_FALSE(testbed.empty());
  const FabricShape shape{.hosts = s.hosts, .rails = s.rails, .spines = s.spines, .pods = s.pods};
  EXPECT_EQ(WithoutHeader(GeneratedText(shape)), WithoutHeader(testbed));
  // The testbed's wording of the size, too.
  EXPECT_NE(testbed.find(DescribeShape(shape)), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Sizes, GeneratorMatchesTestbed,
                         ::testing::Values(Size{2, 2, 2, 1}, Size{4, 4, 4, 2}, Size{8, 3, 5, 4},
                                           Size{16, 8, 8, 1}, Size{6, 2, 1, 3}));

TEST(Generator, TwoTierCounts) {
  const Topology t = testing::Generated({.hosts = 8, .rails = 4, .spines = 3, .pods = 2});
  EXPECT_EQ(t.CountDevices(Tier::kHost), 8u);
  EXPECT_EQ(t.CountDevices(Tier::kRail), 8u);  // pods x rails
  EXPECT_EQ(t.CountDevices(Tier::kSpine), 3u);
  EXPECT_EQ(t.links().size(), 8u * 4 + 2u * 4 * 3);
}

TEST(Generator, ThreeTierValidatesAndRoundTrips) {
  const FabricShape shape{
      .hosts = 8, .rails = 4, .spines = 3, .pods = 2, .tiers = 3, .aggregations = 2};
  const Inventory inv = GenerateInventory(shape);
  const Topology t = BuildTopology(inv);
  EXPECT_EQ(t.CountDevices(Tier::kAggregation), 4u * 2);  // rails x aggregations
  EXPECT_EQ(t.links().size(), 8u * 4 + 2u * 4 * 2 + 4u * 2 * 3);
  const std::string text = WriteInventoryYaml(inv, {});
  EXPECT_EQ(ParseInventory(text, "t.yaml"), inv);
  // Documented addressing: upper links follow the lower ones in 198.19.0.0/17.
  const InventoryLink& first_upper = inv.links[8 * 4 + 2 * 4 * 2];
  EXPECT_EQ(first_upper.name, "r0a00-s00");
  EXPECT_EQ(first_upper.a.ip.ToString(), "198.19.0.32");  // 2 * (pods*rails*aggs = 16)
  EXPECT_EQ(first_upper.b.ip.ToString(), "198.19.0.33");
  EXPECT_EQ(inv.links[8 * 4].name, "p0r0-r0a00");
  EXPECT_EQ(inv.links[8 * 4].a.ip.ToString(), "198.19.0.0");
}

TEST(Generator, NicLinksPastTheTestbedsRangeContinueElsewhere) {
  // 4200 x 8 = 33600 NIC links: the last 832 do not fit in 198.18.0.0/16.
  const Inventory inv = GenerateInventory({.hosts = 4200, .rails = 8, .spines = 2, .pods = 4});
  std::set<std::uint32_t> seen;
  for (const auto& host : inv.hosts) {
    for (const auto& nic : host.nics) {
      EXPECT_TRUE(seen.insert(nic.ip.value).second) << nic.ip.ToString();
      EXPECT_TRUE(seen.insert(nic.switch_ip.value).second) << nic.switch_ip.ToString();
    }
  }
  // idx = r*H + h: rail 7 of host 3367 is the last of the /16, host 3368 the first after.
  EXPECT_EQ(inv.hosts[3367].nics[7].ip.ToString(), "198.18.255.255");
  EXPECT_EQ(inv.hosts[3368].nics[7].switch_ip.ToString(), "100.64.0.0");
  EXPECT_EQ(inv.hosts[3368].nics[7].ip.ToString(), "100.64.0.1");
  EXPECT_EQ(inv.hosts[0].nics[0].ip.ToString(), "198.18.0.1");
}

TEST(Generator, RefusesShapesTheAddressingCannotHold) {
  EXPECT_THROW(GenerateInventory({.hosts = 4, .rails = 1, .spines = 2}), std::invalid_argument);
  EXPECT_THROW(GenerateInventory({.hosts = 5, .rails = 2, .spines = 2, .pods = 2}),
               std::invalid_argument);
  EXPECT_THROW(GenerateInventory({.hosts = 32768, .rails = 2, .spines = 2}), std::invalid_argument);
  EXPECT_THROW(GenerateInventory({.hosts = 4, .rails = 2, .spines = 2, .tiers = 4}),
               std::invalid_argument);
}

}  // namespace
}  // namespace hostmesh::topology
