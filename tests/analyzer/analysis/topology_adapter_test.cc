#include "analyzer/analysis/topology_adapter.h"

#include <gtest/gtest.h>

#include "topology/generator.h"
#include "topology/inventory_loader.h"

namespace hostmesh::analysis {
namespace {

TEST(TopologyAdapter, LinkEndsAreSwitchesAndHostEndsUnknown) {
  const auto topo =
      topology::BuildTopology(topology::GenerateInventory({.hosts = 2, .rails = 2, .spines = 2}));
  const FabricMap map = FabricMapFrom(topo);
  ASSERT_EQ(map.links.size(), topo.links().size());
  EXPECT_EQ(map.switch_count, topo.devices().size());
  int nic_links = 0;
  for (std::size_t l = 0; l < map.links.size(); ++l) {
    const auto& ends = map.links[l];
    if (topo.link(static_cast<LinkId>(l)).kind == topology::LinkKind::kNic) {
      ++nic_links;
      EXPECT_EQ(ends.lower, kUnknown);
      EXPECT_EQ(topo.TierOf(ends.upper), topology::Tier::kRail);
    } else {
      EXPECT_EQ(topo.TierOf(ends.lower), topology::Tier::kRail);
      EXPECT_EQ(topo.TierOf(ends.upper), topology::Tier::kSpine);
    }
  }
  EXPECT_EQ(nic_links, 4);
}

}  // namespace
}  // namespace hostmesh::analysis
