// The fault model: what every kind does before, inside and after its time,
// by direction, flapping phases, ACL port ranges, routing reconvergence,
// background loss and the host queries.

#include "sim/faults.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/sim/sim_test_util.h"

namespace hostmesh::sim {
namespace {

using testing::DeviceNamed;
using testing::kSecond;
using testing::LinkNamed;

constexpr std::uint16_t kPort = 50000;
// Rates combine as 1 - (1 - a)(1 - b): exact to rounding only.
constexpr double kEps = 1e-12;
constexpr std::int64_t kStart = 10 * kSecond;
constexpr std::int64_t kEnd = 30 * kSecond;

class FaultsTest : public ::testing::Test {
 protected:
  FaultSet Only(Fault f) { return FaultSet(fleet_, {f}, {}, 1); }
  Fault OnLink(FaultKind kind, std::uint8_t direction = kBoth) {
    Fault f;
    f.kind = kind;
    f.link = link_;
    f.direction = direction;
    f.start_ns = kStart;
    f.end_ns = kEnd;
    return f;
  }
  Fault OnNic(FaultKind kind) {
    Fault f;
    f.kind = kind;
    f.host = 2;
    f.nic = 1;
    f.start_ns = kStart;
    f.end_ns = kEnd;
    return f;
  }

  const Fleet fleet_{{4, 2, 2, 1, 2, 0}};
  const LinkId link_ = LinkNamed(fleet_, "p0r1-s00");
  const LinkId other_ = LinkNamed(fleet_, "p0r1-s01");
};

TEST_F(FaultsTest, KindNamesRoundTrip) {
  const std::vector<std::string> names = {
      "link_loss",     "link_down",       "link_flap",     "rnic_down",
      "rnic_loss",     "rnic_flap",       "switch_loss",   "blackhole",
      "link_latency",  "host_processing", "host_leave",    "agent_restart",
      "missing_route", "pcie_downgrade",  "pfc_misconfig", "ecmp_collision"};
  for (const std::string& name : names) {
    FaultKind kind{};
    ASSERT_TRUE(FaultKindFromName(name, &kind)) << name;
    EXPECT_EQ(FaultKindName(kind), name);
  }
  FaultKind kind{};
  EXPECT_FALSE(FaultKindFromName("link-loss", &kind));
  EXPECT_FALSE(FaultKindFromName("", &kind));
}

TEST_F(FaultsTest, LinkLossOnlyInsideItsTimeAndOnlyOnItsLink) {
  Fault f = OnLink(FaultKind::kLinkLoss);
  f.rate = 0.3;
  const FaultSet set = Only(f);
  EXPECT_EQ(set.LinkDrop(link_, true, kPort, kStart - 1), 0.0);
  EXPECT_NEAR(set.LinkDrop(link_, true, kPort, kStart), 0.3, kEps);
  EXPECT_NEAR(set.LinkDrop(link_, false, kPort, kStart + kSecond), 0.3, kEps);
  EXPECT_NEAR(set.LinkDrop(link_, true, kPort, kEnd - 1), 0.3, kEps);
  EXPECT_EQ(set.LinkDrop(link_, true, kPort, kEnd), 0.0);  // end is exclusive
  EXPECT_EQ(set.LinkDrop(other_, true, kPort, kStart), 0.0);
  EXPECT_EQ(set.LinkLatency(link_, true, kStart), 0);
}

TEST_F(FaultsTest, DirectionUpDownBoth) {
  for (const std::uint8_t direction : {kUp, kDown, kBoth}) {
    Fault f = OnLink(FaultKind::kLinkLoss, direction);
    f.rate = 0.5;
    const FaultSet set = Only(f);
    const std::int64_t t = kStart + kSecond;
    EXPECT_NEAR(set.LinkDrop(link_, true, kPort, t), (direction & kUp) ? 0.5 : 0.0, kEps)
        << int{direction};
    EXPECT_NEAR(set.LinkDrop(link_, false, kPort, t), (direction & kDown) ? 0.5 : 0.0, kEps)
        << int{direction};
  }
}

TEST_F(FaultsTest, LossesOnOneLinkCompound) {
  Fault a = OnLink(FaultKind::kLinkLoss, kUp);
  a.rate = 0.5;
  Fault b = OnLink(FaultKind::kLinkLoss, kBoth);
  b.rate = 0.2;
  b.start_ns = kStart + 5 * kSecond;
  const FaultSet set(fleet_, {a, b}, {}, 1);
  EXPECT_NEAR(set.LinkDrop(link_, true, kPort, kStart), 0.5, kEps);
  EXPECT_NEAR(set.LinkDrop(link_, true, kPort, kStart + 5 * kSecond), 1 - 0.5 * 0.8, kEps);
  EXPECT_NEAR(set.LinkDrop(link_, false, kPort, kStart + 5 * kSecond), 0.2, kEps);
}

TEST_F(FaultsTest, LinkDownDropsEverythingBothWaysWhileActive) {
  const FaultSet set = Only(OnLink(FaultKind::kLinkDown));
  EXPECT_TRUE(set.any_down_faults());
  EXPECT_EQ(set.LinkDrop(link_, true, kPort, kStart - 1), 0.0);
  EXPECT_EQ(set.LinkDrop(link_, true, kPort, kStart), 1.0);
  EXPECT_EQ(set.LinkDrop(link_, false, kPort, kEnd - 1), 1.0);
  EXPECT_EQ(set.LinkDrop(link_, false, kPort, kEnd), 0.0);
}

TEST_F(FaultsTest, LinkFlapIsDownInTheFirstHalfOfEveryPeriod) {
  Fault f = OnLink(FaultKind::kLinkFlap);
  f.period_ns = 4 * kSecond;
  const FaultSet set = Only(f);
  const auto drop = [&](double s) {
    return set.LinkDrop(link_, true, kPort, static_cast<std::int64_t>(s * 1e9));
  };
  EXPECT_EQ(drop(9.999), 0.0);   // before
  EXPECT_EQ(drop(10.0), 1.0);    // down phase of period 1
  EXPECT_EQ(drop(11.999), 1.0);  // still down
  EXPECT_EQ(drop(12.0), 0.0);    // up phase
  EXPECT_EQ(drop(13.999), 0.0);
  EXPECT_EQ(drop(14.0), 1.0);  // period 2
  EXPECT_EQ(drop(29.0), 0.0);  // 28..30 is an up phase
  EXPECT_EQ(drop(26.5), 1.0);
  EXPECT_EQ(drop(30.0), 0.0);  // after
  EXPECT_EQ(drop(32.5), 0.0);  // would be a down phase, but the fault is over
  EXPECT_FALSE(f.DownAt(kEnd));
  EXPECT_TRUE(f.DownAt(kStart));
}

TEST_F(FaultsTest, BlackholeDropsOnlyItsPortRange) {
  Fault f = OnLink(FaultKind::kBlackhole);
  f.port_min = 50000;
  f.port_max = 50010;
  const FaultSet set = Only(f);
  const std::int64_t t = kStart;
  EXPECT_EQ(set.LinkDrop(link_, true, 49999, t), 0.0);
  EXPECT_EQ(set.LinkDrop(link_, true, 50000, t), 1.0);
  EXPECT_EQ(set.LinkDrop(link_, false, 50005, t), 1.0);
  EXPECT_EQ(set.LinkDrop(link_, true, 50010, t), 1.0);
  EXPECT_EQ(set.LinkDrop(link_, true, 50011, t), 0.0);
  EXPECT_EQ(set.LinkDrop(link_, true, 50005, kEnd), 0.0);
  EXPECT_EQ(set.LinkDrop(other_, true, 50005, t), 0.0);
}

TEST_F(FaultsTest, BlackholeHonoursDirection) {
  Fault f = OnLink(FaultKind::kBlackhole, kDown);
  f.port_min = f.port_max = kPort;
  const FaultSet set = Only(f);
  EXPECT_EQ(set.LinkDrop(link_, true, kPort, kStart), 0.0);
  EXPECT_EQ(set.LinkDrop(link_, false, kPort, kStart), 1.0);
}

TEST_F(FaultsTest, LinkLatencyAddsByDirectionAndTime) {
  Fault f = OnLink(FaultKind::kLinkLatency, kUp);
  f.added_ns = 20'000;
  Fault g = f;
  g.added_ns = 5'000;
  g.direction = kBoth;
  const FaultSet set(fleet_, {f, g}, {}, 1);
  EXPECT_EQ(set.LinkLatency(link_, true, kStart - 1), 0);
  EXPECT_EQ(set.LinkLatency(link_, true, kStart), 25'000);
  EXPECT_EQ(set.LinkLatency(link_, false, kStart), 5'000);
  EXPECT_EQ(set.LinkLatency(link_, true, kEnd), 0);
  EXPECT_EQ(set.LinkLatency(other_, true, kStart), 0);
  EXPECT_EQ(set.LinkDrop(link_, true, kPort, kStart), 0.0);  // slow, not lossy
}

TEST_F(FaultsTest, RnicDownLossAndFlap) {
  {
    const FaultSet set = Only(OnNic(FaultKind::kRnicDown));
    EXPECT_EQ(set.RnicDrop(2, 1, kStart - 1), 0.0);
    EXPECT_EQ(set.RnicDrop(2, 1, kStart), 1.0);
    EXPECT_EQ(set.RnicDrop(2, 1, kEnd - 1), 1.0);
    EXPECT_EQ(set.RnicDrop(2, 1, kEnd), 0.0);
    EXPECT_EQ(set.RnicDrop(2, 0, kStart), 0.0);  // its other NIC
    EXPECT_EQ(set.RnicDrop(1, 1, kStart), 0.0);  // the same NIC of another host
  }
  {
    Fault f = OnNic(FaultKind::kRnicLoss);
    f.rate = 0.05;
    const FaultSet set = Only(f);
    EXPECT_EQ(set.RnicDrop(2, 1, kStart - 1), 0.0);
    EXPECT_NEAR(set.RnicDrop(2, 1, kStart), 0.05, kEps);
    EXPECT_EQ(set.RnicDrop(2, 1, kEnd), 0.0);
  }
  {
    Fault f = OnNic(FaultKind::kRnicFlap);
    f.period_ns = 2 * kSecond;
    const FaultSet set = Only(f);
    EXPECT_EQ(set.RnicDrop(2, 1, kStart), 1.0);
    EXPECT_EQ(set.RnicDrop(2, 1, kStart + kSecond - 1), 1.0);
    EXPECT_EQ(set.RnicDrop(2, 1, kStart + kSecond), 0.0);
    EXPECT_EQ(set.RnicDrop(2, 1, kStart + 2 * kSecond), 1.0);
    EXPECT_EQ(set.RnicDrop(2, 1, kEnd), 0.0);
  }
}

TEST_F(FaultsTest, APortIsDownWhileItsNicIsDownOrInAFlapsDownPhaseOnly) {
  {
    const FaultSet set = Only(OnNic(FaultKind::kRnicDown));
    EXPECT_FALSE(set.RnicPortDown(2, 1, kStart - 1));
    EXPECT_TRUE(set.RnicPortDown(2, 1, kStart));
    EXPECT_TRUE(set.RnicPortDown(2, 1, kEnd - 1));
    EXPECT_FALSE(set.RnicPortDown(2, 1, kEnd));
    EXPECT_FALSE(set.RnicPortDown(2, 0, kStart));
  }
  {
    Fault f = OnNic(FaultKind::kRnicFlap);
    f.period_ns = 2 * kSecond;
    const FaultSet set = Only(f);
    EXPECT_TRUE(set.RnicPortDown(2, 1, kStart));
    EXPECT_FALSE(set.RnicPortDown(2, 1, kStart + kSecond));
    EXPECT_TRUE(set.RnicPortDown(2, 1, kStart + 2 * kSecond));
  }
  // Lossy or unrouted NICs have their port up: they send, the fabric drops.
  for (const FaultKind kind :
       {FaultKind::kRnicLoss, FaultKind::kMissingRoute, FaultKind::kPcieDowngrade}) {
    EXPECT_FALSE(Only(OnNic(kind)).RnicPortDown(2, 1, kStart)) << FaultKindName(kind);
  }
}

TEST_F(FaultsTest, SwitchLossOnlyOnThatSwitch) {
  Fault f;
  f.kind = FaultKind::kSwitchLoss;
  f.switch_id = DeviceNamed(fleet_, "s01");
  f.rate = 0.02;
  f.start_ns = kStart;
  f.end_ns = kEnd;
  const FaultSet set = Only(f);
  EXPECT_EQ(set.SwitchDrop(f.switch_id, kStart - 1), 0.0);
  EXPECT_NEAR(set.SwitchDrop(f.switch_id, kStart), 0.02, kEps);
  EXPECT_EQ(set.SwitchDrop(f.switch_id, kEnd), 0.0);
  EXPECT_EQ(set.SwitchDrop(DeviceNamed(fleet_, "s00"), kStart), 0.0);
  // The switch's links themselves stay clean: the drop happens in the switch.
  EXPECT_EQ(set.LinkDrop(LinkNamed(fleet_, "p0r0-s01"), true, kPort, kStart), 0.0);
}

TEST_F(FaultsTest, HostQueries) {
  Fault slow;
  slow.kind = FaultKind::kHostProcessing;
  slow.host = 1;
  slow.added_ns = 3'000'000;
  slow.start_ns = kStart;
  slow.end_ns = kEnd;
  Fault leave = slow;
  leave.kind = FaultKind::kHostLeave;
  leave.host = 3;
  Fault restart = slow;
  restart.kind = FaultKind::kAgentRestart;
  restart.host = 0;
  restart.start_ns = 15 * kSecond;
  restart.end_ns = 16 * kSecond;
  const FaultSet set(fleet_, {slow, leave, restart}, {}, 1);

  EXPECT_EQ(set.ProcessingDelay(1, kStart - 1), 0);
  EXPECT_EQ(set.ProcessingDelay(1, kStart), 3'000'000);
  EXPECT_EQ(set.ProcessingDelay(1, kEnd), 0);
  EXPECT_EQ(set.ProcessingDelay(3, kStart), 0);

  EXPECT_FALSE(set.HostAbsent(3, kStart - 1));
  EXPECT_TRUE(set.HostAbsent(3, kStart));
  EXPECT_TRUE(set.HostAbsent(3, kEnd - 1));
  EXPECT_FALSE(set.HostAbsent(3, kEnd));
  EXPECT_FALSE(set.HostAbsent(1, kStart));  // slow is not absent

  EXPECT_EQ(set.RestartsBetween(0, 14 * kSecond, 15 * kSecond), 0);  // [from, to)
  EXPECT_EQ(set.RestartsBetween(0, 15 * kSecond, 16 * kSecond), 1);
  EXPECT_EQ(set.RestartsBetween(0, 0, kEnd), 1);
  EXPECT_EQ(set.RestartsBetween(0, 15 * kSecond + 1, kEnd), 0);
  EXPECT_EQ(set.RestartsBetween(1, 0, kEnd), 0);
  // None of them touches the fabric.
  EXPECT_FALSE(set.any_down_faults());
  for (LinkId l = 0; l < fleet_.link_count(); ++l) {
    EXPECT_EQ(set.LinkDrop(l, true, kPort, kStart), 0.0);
  }
}

TEST_F(FaultsTest, RoutingAvoidsALinkOneSecondAfterItWentDown) {
  const FaultSet set = Only(OnLink(FaultKind::kLinkDown));
  std::vector<std::uint8_t> dead;
  const auto dead_at = [&](std::int64_t t) {
    set.DeadLinksAt(t, dead);
    EXPECT_EQ(dead.size(), fleet_.link_count());
    return std::count(dead.begin(), dead.end(), 1) == 1 && dead[link_] == 1;
  };
  EXPECT_FALSE(dead_at(kStart - 1));
  EXPECT_FALSE(dead_at(kStart));  // down, but not yet withdrawn: it drops
  EXPECT_FALSE(dead_at(kStart + FaultSet::kReconvergeNs - 1));
  EXPECT_TRUE(dead_at(kStart + FaultSet::kReconvergeNs));
  EXPECT_TRUE(dead_at(kEnd - 1));
  EXPECT_FALSE(dead_at(kEnd));  // back up: used again at once
  set.DeadLinksAt(kEnd, dead);
  EXPECT_EQ(std::count(dead.begin(), dead.end(), 1), 0);
}

TEST_F(FaultsTest, AFlappingLinkIsWithdrawnOnlyWhenItsDownPhaseOutlastsReconvergence) {
  Fault slow = OnLink(FaultKind::kLinkFlap);
  slow.period_ns = 4 * kSecond;  // down 2 s: withdrawn for the last second of it
  Fault fast = slow;
  fast.link = other_;
  fast.period_ns = kSecond;  // down 0.5 s: never withdrawn, drops instead
  const FaultSet set(fleet_, {slow, fast}, {}, 1);
  EXPECT_TRUE(set.any_down_faults());
  std::vector<std::uint8_t> dead;
  for (std::int64_t t = kStart - kSecond; t < kEnd + kSecond; t += kSecond / 4) {
    set.DeadLinksAt(t, dead);
    const std::int64_t phase = (t - kStart) % slow.period_ns;
    const bool withdrawn = slow.ActiveAt(t) && phase >= kSecond && phase < 2 * kSecond;
    EXPECT_EQ(dead[link_], withdrawn ? 1 : 0) << t;
    EXPECT_EQ(dead[other_], 0) << t;
  }
}

TEST_F(FaultsTest, NoDownFaultsNoDeadLinks) {
  Fault f = OnLink(FaultKind::kLinkLoss);
  f.rate = 1.0;
  const FaultSet set = Only(f);
  EXPECT_FALSE(set.any_down_faults());
  std::vector<std::uint8_t> dead(3, 1);
  set.DeadLinksAt(kStart + 5 * kSecond, dead);
  EXPECT_EQ(dead, std::vector<std::uint8_t>(fleet_.link_count(), 0));
}

TEST(BackgroundLossTest, DrawnLogUniformlyWithinBoundsPerDirectedLinkFromTheSeed) {
  const Fleet fleet({64, 8, 8, 1, 2, 0});  // 576 links, 1152 directions
  const BackgroundLoss bg{1e-5, 1e-3};
  const FaultSet a(fleet, {}, bg, 7);
  const FaultSet b(fleet, {}, bg, 7);
  const FaultSet c(fleet, {}, bg, 8);
  std::size_t below_middle = 0, differs = 0, directions_differ = 0;
  for (LinkId l = 0; l < fleet.link_count(); ++l) {
    for (const bool up : {true, false}) {
      const double rate = a.background(l, up);
      EXPECT_GE(rate, bg.min);
      EXPECT_LE(rate, bg.max);
      EXPECT_EQ(rate, b.background(l, up));  // same seed: same draw
      differs += rate != c.background(l, up);
      below_middle += rate < 1e-4;  // the geometric middle of [min, max]
      // With no fault, a link drops its background rate, whatever the port.
      EXPECT_NEAR(a.LinkDrop(l, up, kPort, 0), rate, kEps);
      EXPECT_NEAR(a.LinkDrop(l, up, 1, 3600 * kSecond), rate, kEps);
    }
    directions_differ += a.background(l, true) != a.background(l, false);
  }
  const double n = 2.0 * static_cast<double>(fleet.link_count());
  EXPECT_EQ(differs, 2 * fleet.link_count());
  EXPECT_EQ(directions_differ, fleet.link_count());
  // Log-uniform: half the draws below the geometric middle (4 sigma: 0.059).
  EXPECT_NEAR(static_cast<double>(below_middle) / n, 0.5, 4 * std::sqrt(0.25 / n));
}

TEST(BackgroundLossTest, FixedRateNoneAndCombinedWithAFault) {
  const Fleet fleet({4, 2, 2, 1, 2, 0});
  const FaultSet fixed(fleet, {}, {2e-4, 2e-4}, 3);
  const FaultSet none(fleet, {}, {}, 3);
  for (LinkId l = 0; l < fleet.link_count(); ++l) {
    EXPECT_NEAR(fixed.background(l, true), 2e-4, 1e-12);
    EXPECT_EQ(none.background(l, false), 0.0);
    EXPECT_EQ(none.LinkDrop(l, false, kPort, 0), 0.0);
  }
  Fault f;
  f.kind = FaultKind::kLinkLoss;
  f.link = testing::LinkNamed(fleet, "p0r0-s00");
  f.rate = 0.1;
  f.end_ns = kSecond;
  const FaultSet both(fleet, {f}, {2e-4, 2e-4}, 3);
  EXPECT_NEAR(both.LinkDrop(f.link, true, kPort, 0), 1 - (1 - 2e-4) * 0.9, 1e-12);
  EXPECT_NEAR(both.LinkDrop(f.link, true, kPort, kSecond), 2e-4, 1e-12);
}

}  // namespace
}  // namespace hostmesh::sim
