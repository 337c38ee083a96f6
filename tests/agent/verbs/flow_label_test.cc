#include "agent/verbs/flow_label.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

namespace hostmesh::agent::verbs {
namespace {

TEST(FlowLabel, EveryRocePortRoundTripsThroughRdmaCore) {
  for (std::uint32_t port = 49152; port <= 65535; ++port) {
    const auto sport = static_cast<std::uint16_t>(port);
    const auto label = FlowLabelForUdpSport(sport);
    ASSERT_TRUE(label.has_value()) << port;
    EXPECT_NE(*label, 0u) << "label 0 means 'unset' to providers; port " << port;
    EXPECT_EQ(*label & ~kFlowLabelMask, 0u) << "not a 20-bit label; port " << port;
    // The real inline function from rdma-core, not our copy of the formula.
    EXPECT_EQ(ibv_flow_label_to_udp_sport(*label), sport) << "label " << *label;
  }
}

TEST(FlowLabel, PortsBelowTheRoceRangeAreUnreachable) {
  EXPECT_FALSE(FlowLabelForUdpSport(0).has_value());
  EXPECT_FALSE(FlowLabelForUdpSport(4791).has_value());
  EXPECT_FALSE(FlowLabelForUdpSport(49151).has_value());
}

TEST(FlowLabel, OurFormulaMatchesRdmaCoreForEveryLabel) {
  for (std::uint32_t label = 0; label <= kFlowLabelMask; ++label) {
    ASSERT_EQ(UdpSportForFlowLabel(label), ibv_flow_label_to_udp_sport(label)) << label;
  }
}

TEST(FlowLabel, LowestPortAvoidsTheZeroLabel) {
  EXPECT_EQ(FlowLabelForUdpSport(0xC000), 0x04001u);
  EXPECT_EQ(FlowLabelForUdpSport(0xC001), 0x1u);
  EXPECT_EQ(FlowLabelForUdpSport(0xFFFF), 0x3FFFu);
}

}  // namespace
}  // namespace hostmesh::agent::verbs
