#include "tracer/known_hops.h"

#include <gtest/gtest.h>

namespace hostmesh::tracer {
namespace {

void Fill(KnownHops& hops) {
  for (std::size_t i = 0; i < hops.size(); ++i) {
    hops[i] = {Ipv4{static_cast<std::uint32_t>(100 + i)}, HopStatus::kTimeExceeded,
               static_cast<std::uint8_t>(i)};
  }
}

void ExpectFilled(const KnownHops& hops) {
  for (std::size_t i = 0; i < hops.size(); ++i) {
    EXPECT_EQ(hops[i].address.value, 100 + i) << "hop " << i;
    EXPECT_EQ(hops[i].status, HopStatus::kTimeExceeded) << "hop " << i;
    EXPECT_EQ(hops[i].icmp_code, i) << "hop " << i;
  }
}

TEST(KnownHops, PathsShorterAndLongerThanTheInlinePartKeepEveryHop) {
  KnownHops hops;
  EXPECT_EQ(hops.size(), 0U);
  for (const std::size_t n : {1U, 4U, 5U, 9U, 32U, 3U, 0U}) {
    hops.Reset(n);
    ASSERT_EQ(hops.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(hops[i].status, HopStatus::kSilent) << n << " hops, hop " << i;
      EXPECT_TRUE(hops[i].address.IsZero()) << n << " hops, hop " << i;
    }
    Fill(hops);
    ExpectFilled(hops);
  }
}

TEST(KnownHops, ALengthBeyondWhatATtlCountsIsCut) {
  KnownHops hops;
  hops.Reset(1000);
  EXPECT_EQ(hops.size(), KnownHops::kMaxSize);
  Fill(hops);
  ExpectFilled(hops);
}

TEST(KnownHops, AnEntryOfTheTracersTableStaysSmall) {
  // What the inline part is for: no block of its own for a two-tier path.
  EXPECT_LE(sizeof(KnownHops), 48U);
}

}  // namespace
}  // namespace hostmesh::tracer
