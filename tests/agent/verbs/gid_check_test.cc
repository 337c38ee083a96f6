#include "agent/verbs/gid_check.h"

#include <gtest/gtest.h>

#include <vector>

namespace hostmesh::agent::verbs {
namespace {

GidEntry V4Mapped(std::uint32_t index, Ipv4Bytes ip, GidType type) {
  GidEntry e;
  e.index = index;
  e.raw[10] = 0xFF;
  e.raw[11] = 0xFF;
  std::copy(ip.begin(), ip.end(), e.raw.begin() + 12);
  e.type = type;
  return e;
}

GidEntry LinkLocal(std::uint32_t index, GidType type) {
  GidEntry e;
  e.index = index;
  e.raw[0] = 0xFE;
  e.raw[1] = 0x80;
  e.raw[15] = 0x01;
  e.type = type;
  return e;
}

const Ipv4Bytes kNic{198, 18, 0, 1};

TEST(GidCheck, TheRoceV2GidOfTheNicsAddressIsUsable) {
  EXPECT_EQ(GidProblem(V4Mapped(1, kNic, GidType::kRoceV2), kNic), "");
  EXPECT_EQ(GidProblem(V4Mapped(1, kNic, GidType::kRoceV2), std::nullopt), "");
}

TEST(GidCheck, EachWrongGidSaysWhatIsWrong) {
  EXPECT_EQ(GidProblem(GidEntry{5, {}, GidType::kRoceV2}, kNic), "GID index 5 is empty");
  EXPECT_EQ(GidProblem(V4Mapped(2, kNic, GidType::kRoceV1), kNic),
            "GID index 2 (::ffff:198.18.0.1) is RoCE v1, not RoCE v2: no UDP source port to "
            "rotate and no IP path to trace");
  EXPECT_EQ(GidProblem(LinkLocal(0, GidType::kRoceV2), kNic),
            "GID index 0 is fe80::1, not the NIC's address 198.18.0.1");
  EXPECT_EQ(GidProblem(V4Mapped(3, {198, 18, 0, 5}, GidType::kRoceV2), kNic),
            "GID index 3 is ::ffff:198.18.0.5, not the NIC's address 198.18.0.1");
}

TEST(GidCheck, FindsTheRightIndexInAMlx5AndAnRxeTable) {
  // mlx5: v1 and v2 of the link-local, then v1 and v2 of the address.
  const std::vector<GidEntry> mlx5{LinkLocal(0, GidType::kRoceV1), LinkLocal(1, GidType::kRoceV2),
                                   V4Mapped(2, kNic, GidType::kRoceV1),
                                   V4Mapped(3, kNic, GidType::kRoceV2)};
  EXPECT_EQ(FindRoceV2Gid(mlx5, kNic), 3u);
  // rxe (seen in deploy/testbed/rxe): v2 only, the address at 1.
  const std::vector<GidEntry> rxe{LinkLocal(0, GidType::kRoceV2),
                                  V4Mapped(1, kNic, GidType::kRoceV2)};
  EXPECT_EQ(FindRoceV2Gid(rxe, kNic), 1u);
  EXPECT_EQ(FindRoceV2Gid(rxe, Ipv4Bytes{10, 0, 0, 1}), std::nullopt);
}

TEST(GidCheck, ParsesOnlyIpv4) {
  EXPECT_EQ(ParseIpv4("198.18.0.1"), kNic);
  EXPECT_EQ(ParseIpv4("fe80::1"), std::nullopt);
  EXPECT_EQ(ParseIpv4("nic0"), std::nullopt);
}

}  // namespace
}  // namespace hostmesh::agent::verbs
