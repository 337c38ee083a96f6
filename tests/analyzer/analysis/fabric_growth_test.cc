// A fabric that grows while the analysis runs (learned from traceroutes, no
// inventory): links are ranked before anything is known of the switches, and
// once Analysis::SetFabric names the links' switches the judge sees them.

#include <gtest/gtest.h>

#include <set>

#include "tests/analyzer/analysis/synthetic_fleet.h"

namespace hostmesh::analysis::testing {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kT0 = 1'704'067'200 * kSecond;  // a window boundary

// Switches with a blamed link on them.
std::set<SwitchId> Listed(const Localization& loc) {
  std::set<SwitchId> out;
  for (const SwitchRank& s : loc.switches) {
    if (s.culprit_links > 0) out.insert(s.id);
  }
  return out;
}

TEST(FabricGrowth, SwitchesCountOnceTheFabricNamesThem) {
  SyntheticFleet fleet{FleetShape{}};
  Analysis analysis(AnalysisConfig{}, FabricMap{});  // nothing learned yet
  fleet.TracePaths(analysis, kT0);
  const LinkId bad = fleet.RailSpine(1, 2);
  const Faults faults{.link_loss = {{bad, 1.0}}};

  fleet.ProbeInto(analysis, kT0, faults);
  auto reports = analysis.Advance(kT0 + 30 * kSecond);
  ASSERT_EQ(reports.size(), 1u);
  ASSERT_FALSE(reports[0].loss.links.empty());
  EXPECT_EQ(reports[0].loss.links.front().link, bad);
  EXPECT_TRUE(reports[0].loss.switches.empty());

  const FabricMap map = fleet.Map();
  analysis.SetFabric(map.links, map.switch_count);
  fleet.ProbeInto(analysis, kT0 + 20 * kSecond, faults);
  reports = analysis.Advance(kT0 + 50 * kSecond);
  ASSERT_EQ(reports.size(), 1u);
  ASSERT_FALSE(reports[0].loss.links.empty());
  EXPECT_EQ(reports[0].loss.links.front().link, bad);
  EXPECT_EQ(Listed(reports[0].loss), (std::set<SwitchId>{fleet.RailSwitch(1), fleet.Spine(2)}));
  EXPECT_EQ(analysis.fabric().links.size(), fleet.link_count());
}

}  // namespace
}  // namespace hostmesh::analysis::testing
