#include "topology/ecmp.h"

#include <gtest/gtest.h>

#include "tests/topology/test_fabrics.h"
#include "topology/path_resolver.h"

namespace hostmesh::topology {
namespace {

using testing::NicIp;

class EcmpCount : public ::testing::TestWithParam<int> {};

// Two NICs of one host in a 2-tier fabric: one path per spine.
TEST_P(EcmpCount, OnePathPerSpine) {
  const int spines = GetParam();
  const Topology t = testing::Generated({.hosts = 4, .rails = 4, .spines = spines, .pods = 2});
  for (int r = 1; r < 4; ++r) {
    const auto paths = EnumerateEcmpPaths(t, NicIp(t, 3, 0), NicIp(t, 3, r));
    ASSERT_EQ(paths.size(), static_cast<size_t>(spines));
    for (const auto& path : paths) EXPECT_EQ(path.size(), 4u);
  }
}
INSTANTIATE_TEST_SUITE_P(Spines, EcmpCount, ::testing::Values(1, 2, 4, 7));

TEST(Ecmp, SameRailAndAcrossPods) {
  const Topology t = testing::Generated({.hosts = 4, .rails = 2, .spines = 3, .pods = 2});
  // h000 and h001 share pod 0's rail switch: one path, two NIC links.
  EXPECT_EQ(EnumerateEcmpPaths(t, NicIp(t, 0, 0), NicIp(t, 1, 0)).size(), 1u);
  // h000 (pod 0) to h002 (pod 1), same rail: through any spine.
  EXPECT_EQ(EnumerateEcmpPaths(t, NicIp(t, 0, 0), NicIp(t, 2, 0)).size(), 3u);
  EXPECT_TRUE(EnumerateEcmpPaths(t, NicIp(t, 0, 0), *ParseIpv4("10.0.0.1")).empty());
}

TEST(Ecmp, EveryPathResolvesToItself) {
  const Topology t = testing::Generated({.hosts = 4, .rails = 4, .spines = 4, .pods = 2});
  const PathResolver resolver(t);
  for (const auto& path : EnumerateEcmpPaths(t, NicIp(t, 2, 1), NicIp(t, 2, 3))) {
    const ResolvedPath p =
        resolver.Resolve(NicIp(t, 2, 1), NicIp(t, 2, 3), ExpectedHops(t, path, NicIp(t, 2, 1)));
    EXPECT_EQ(p.status, PathStatus::kOk);
    EXPECT_EQ(p.links, path);
  }
}

TEST(Coverage, CrossedAndNeverCrossed) {
  const Topology t = testing::Generated({.hosts = 4, .rails = 4, .spines = 4, .pods = 2});
  CoverageCounter coverage(t);
  // Every path between every NIC pair of h000: all of h000's NIC links and every
  // fabric link of pod 0, nothing else.
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      if (a == b) continue;
      for (const auto& path : EnumerateEcmpPaths(t, NicIp(t, 0, a), NicIp(t, 0, b))) {
        coverage.Add(path);
      }
    }
  }
  EXPECT_EQ(coverage.paths(), 12u * 4);
  const CoverageCounter::Summary s = coverage.Summarize();
  EXPECT_EQ(s.crossed.size(), 4u + 4u * 4);
  EXPECT_EQ(s.never_crossed.size(), t.links().size() - s.crossed.size());
  for (LinkId id : s.crossed) {
    const std::string& name = t.link(id).name;
    EXPECT_TRUE(name.starts_with("h000.") || name.starts_with("p0r")) << name;
  }
  for (LinkId id : s.never_crossed) EXPECT_EQ(coverage.crossings(id), 0u);
  // Each uplink of p0r0 carries 3 destinations x 1 path each way: 6 crossings.
  EXPECT_EQ(coverage.crossings(s.crossed[4]), 6u);
  EXPECT_EQ(t.link(s.crossed[4]).name, "p0r0-s00");
  // Ambiguous positions (kNone) count for nothing.
  coverage.Clear();
  const std::vector<LinkId> partial{s.crossed[0], kNone};
  coverage.Add(partial);
  EXPECT_EQ(coverage.Summarize().crossed.size(), 1u);
}

}  // namespace
}  // namespace hostmesh::topology
