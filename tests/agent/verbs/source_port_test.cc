#include "agent/verbs/source_port.h"

#include <gtest/gtest.h>

namespace hostmesh::agent::verbs {
namespace {

TEST(SourcePort, RxePortOfAQpIsTheOneSeenOnTheWire) {
  // deploy/testbed/rxe: every UD probe of QPN 0x11 (both rxe devices of the
  // guest) left from UDP port 57236, whatever the AH's flow label.
  EXPECT_EQ(RxeQpSourcePort(0x11), 57236);
}

TEST(SourcePort, RxePortsStayInTheRoceRangeAndSpreadOverIt) {
  std::uint16_t lowest = 0xFFFF;
  std::uint16_t highest = 0;
  for (std::uint32_t qpn = 0x11; qpn < 0x11 + 64; ++qpn) {
    const std::uint16_t port = RxeQpSourcePort(qpn);
    EXPECT_GE(port, 0xC000);
    lowest = std::min(lowest, port);
    highest = std::max(highest, port);
  }
  EXPECT_LT(lowest, 0xC000 + 0x1000);
  EXPECT_GT(highest, 0xFFFF - 0x1000);
}

TEST(SourcePort, SoftRoceRotatesByQpOthersByFlowLabel) {
  EXPECT_EQ(SourcePortModeForVendor(kRxeVendorId), SourcePortMode::kPerQp);
  EXPECT_EQ(SourcePortModeForVendor(0x02C9), SourcePortMode::kFlowLabel);  // Mellanox
  EXPECT_EQ(SourcePortModeName(SourcePortMode::kPerQp), "qp");
  EXPECT_EQ(SourcePortModeName(SourcePortMode::kFlowLabel), "flow_label");
}

}  // namespace
}  // namespace hostmesh::agent::verbs
