// The per-port tally of a watched link: probes and failures per source port,
// at most max_ports ports (the first seen), the rest counted as untallied.
#include "analyzer/analysis/port_tally.h"

#include <gtest/gtest.h>

namespace hostmesh::analysis {
namespace {

TEST(PortTally, TalliesProbesAndFailuresPerPortInPortOrder) {
  PortTally tally;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(tally.Add(49153, /*failed=*/true));
  EXPECT_TRUE(tally.Add(49152, false));
  EXPECT_TRUE(tally.Add(49152, true));
  const std::vector<PortOutcome> out = tally.Outcomes();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].port, 49152);
  EXPECT_EQ(out[0].probes, 2u);
  EXPECT_EQ(out[0].failures, 1u);
  EXPECT_EQ(out[1].port, 49153);
  EXPECT_EQ(out[1].probes, 3u);
  EXPECT_EQ(out[1].failures, 3u);
  EXPECT_FALSE(tally.capped());
}

TEST(PortTally, PastTheCapNewPortsAreCountedNotTalliedAndKeptOnesStillCount) {
  PortTally tally(/*max_ports=*/2);
  EXPECT_TRUE(tally.Add(1, false));
  EXPECT_TRUE(tally.Add(2, true));
  EXPECT_FALSE(tally.Add(3, true)) << "a third port is past the cap";
  EXPECT_FALSE(tally.Add(4, false));
  EXPECT_TRUE(tally.Add(1, true)) << "a port already tallied keeps counting";
  EXPECT_EQ(tally.ports(), 2u);
  EXPECT_TRUE(tally.capped());
  EXPECT_EQ(tally.untallied_probes(), 2u);
  const std::vector<PortOutcome> out = tally.Outcomes();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].probes, 2u);
  EXPECT_EQ(out[0].failures, 1u);
}

TEST(PortTally, TheWholePortSpaceStaysWithinTheCapsMemory) {
  PortTally tally;
  for (std::uint32_t port = 0; port <= 0xffff; ++port) {
    tally.Add(static_cast<std::uint16_t>(port), port % 2 == 0);
  }
  EXPECT_EQ(tally.ports(), PortTally::kMaxPorts);
  EXPECT_EQ(tally.untallied_probes(), 0x10000 - PortTally::kMaxPorts);
  EXPECT_LT(tally.memory_bytes(), std::size_t{64} << 10);
}

}  // namespace
}  // namespace hostmesh::analysis
