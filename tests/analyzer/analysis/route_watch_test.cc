// Links routing has withdrawn (route_watch.h), on the synthetic 8 x 4 x 4
// fleet's map: traces are built by hand, one ECMP draw each.

#include "analyzer/analysis/route_watch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "analyzer/analysis/analysis.h"
#include "tests/analyzer/analysis/fleet_test_base.h"
#include "tests/analyzer/analysis/synthetic_fleet.h"

namespace hostmesh::analysis::testing {
namespace {

constexpr double kAlpha = 1e-12;

class RouteWatchTest : public ::testing::Test {
 protected:
  // A trace from host h's NIC 0 (rail 0) to its NIC 1 over `spine`.
  PathRecord Trace(HostId h, std::uint32_t spine) const {
    PathRecord p;
    p.host = h;
    p.src_nic = 0;
    p.dst_nic = 1;
    p.time_ns = ++now_;
    p.src_port = static_cast<std::uint16_t>(now_);
    p.links = {fleet_.NicLink(h, 0), fleet_.RailSpine(0, spine), fleet_.RailSpine(1, spine),
               fleet_.NicLink(h, 1)};
    return p;
  }
  // Cut short past rail switch 0: every way on is a candidate.
  PathRecord CutShort(HostId h) const {
    PathRecord p = Trace(h, 0);
    p.links[1] = p.links[2] = kUnknown;
    for (std::uint32_t s = 0; s < fleet_.shape().spines; ++s) {
      p.candidates.push_back({1, fleet_.RailSpine(0, s)});
      p.candidates.push_back({2, fleet_.RailSpine(1, s)});
    }
    return p;
  }
  static std::uint64_t Key(const PathRecord& p) {
    return PathTable::Key(p.host, p.src_nic, p.dst_nic, p.src_port);
  }
  // Adds a trace; a cut-short one's 5-tuple then gets a probe outcome.
  void Add(const PathRecord& p, bool fresh = true, bool delivered = false) {
    watch_.AddTrace(p, fresh, map_, Key(p));
    watch_.AddOutcome(Key(p), delivered, map_);
  }
  bool Withdrawn(LinkId link) const {
    const auto gone = watch_.Withdrawn(map_, {});
    return std::any_of(gone.begin(), gone.end(),
                       [&](const WithdrawnLink& w) { return w.link == link; });
  }

  SyntheticFleet fleet_{FleetShape{}};
  FabricMap map_ = fleet_.Map();
  RouteWatch watch_{kAlpha};
  mutable std::int64_t now_ = 0;
};

TEST_F(RouteWatchTest, ALinkNoFreshDrawPicksIsWithdrawnOnceThatIsBeyondChance) {
  // 4 up-links: a link in use is missed by n draws with chance (3/4)^n, below
  // 1e-12 from n = 97 on.
  const LinkId down = fleet_.RailSpine(0, 0);
  Add(Trace(0, 0), true);
  for (int i = 0; i < 96; ++i) Add(Trace(0, 1 + i % 3), true);
  EXPECT_FALSE(Withdrawn(down)) << "96 misses happen once in 1e12 draws' worth of tries";
  Add(Trace(0, 1), true);
  EXPECT_TRUE(Withdrawn(down));
  for (std::uint32_t s = 1; s < 4; ++s) EXPECT_FALSE(Withdrawn(fleet_.RailSpine(0, s)));
  EXPECT_FALSE(Withdrawn(fleet_.RailSpine(1, 0))) << "rail 1 made no draw";
}

TEST_F(RouteWatchTest, ALinkBackInUseIsReleasedAtOnceAndAnyCrossingCounts) {
  const LinkId down = fleet_.RailSpine(0, 0);
  for (int i = 0; i < 200; ++i) Add(Trace(0, 1 + i % 3), true);
  ASSERT_TRUE(Withdrawn(down));
  // A retrace of a known 5-tuple crossing it (no draw) shows it in use.
  Add(Trace(3, 0), false);
  EXPECT_FALSE(Withdrawn(down));
  for (int i = 0; i < 200; ++i) Add(Trace(0, 1 + i % 3), true);
  ASSERT_TRUE(Withdrawn(down));
  // A trace from rail 1 down to rail 0 over it crosses it the other way.
  PathRecord back = Trace(2, 0);
  back.src_nic = 1;
  back.dst_nic = 0;
  std::reverse(back.links.begin(), back.links.end());
  Add(back, true);
  EXPECT_FALSE(Withdrawn(down));
}

TEST_F(RouteWatchTest, ALinkInUseIsNotWithdrawnOverManyDraws) {
  for (int i = 0; i < 20000; ++i) {
    const HostId h = static_cast<HostId>(i % 8);
    Add(Trace(h, fleet_.SpineOf(h, 0, 1, static_cast<std::uint16_t>(i))), true);
  }
  EXPECT_TRUE(watch_.Withdrawn(map_, {}).empty());
}

TEST_F(RouteWatchTest, AGrayLinkThatEatsItsTracesIsNotTakenForWithdrawn) {
  // Every fourth draw goes up spine 0 and is cut short there: a gray link.
  const LinkId gray = fleet_.RailSpine(0, 0);
  for (int i = 0; i < 2000; ++i) {
    Add(i % 4 == 0 ? CutShort(0) : Trace(0, 1 + i % 3), true);
  }
  EXPECT_FALSE(Withdrawn(gray));
  // A few cut short by something else beside many that avoid it: withdrawn.
  for (int i = 0; i < 2000; ++i) {
    Add(i % 100 == 0 ? CutShort(0) : Trace(0, 1 + i % 3), true);
  }
  EXPECT_TRUE(Withdrawn(gray));
}

// At fleet scale switches' ICMP rate limits cut a share of traces short past
// the rail switch, more than the 1/k a link in use could hide among: every
// third here. Their probes get through, so they say nothing of which way
// they went, and the down link that the rest avoid is withdrawn.
TEST_F(RouteWatchTest, DrawsCutShortWhoseProbesGetThroughAreNoDraws) {
  const LinkId down = fleet_.RailSpine(0, 0);
  for (int i = 0; i < 600; ++i) {
    Add(i % 3 == 0 ? CutShort(0) : Trace(0, 1 + i % 3), true, /*delivered=*/true);
  }
  EXPECT_TRUE(Withdrawn(down));
  EXPECT_EQ(watch_.awaiting(), 0u);
}

// A draw cut short counts as one a link named for its loss may have picked
// while its outcome is awaited (a gray link's first cut traces count at
// once), and as one any up-link may have picked when none came within the
// wait.
TEST_F(RouteWatchTest, ADrawAwaitingItsOutcomeMayHavePickedAFailingUpLink) {
  const LinkId quiet = fleet_.RailSpine(0, 0);
  RouteWatch watch(kAlpha, /*pending_ttl_ns=*/100);
  std::vector<std::uint64_t> cut;
  for (int i = 0; i < 600; ++i) {
    const PathRecord p = i % 3 == 0 ? CutShort(0) : Trace(0, 1 + i % 3);
    watch.AddTrace(p, true, map_, Key(p));
    if (i % 3 == 0) cut.push_back(Key(p));
  }
  std::vector<char> failing(map_.links.size(), 0);
  failing[quiet] = 1;
  const auto withdrawn = [&](const std::vector<char>& named) {
    const auto gone = watch.Withdrawn(map_, named);
    return std::any_of(gone.begin(), gone.end(),
                       [&](const WithdrawnLink& w) { return w.link == quiet; });
  };
  EXPECT_EQ(watch.awaiting(), 200u);
  EXPECT_FALSE(withdrawn(failing)) << "a gray link's share may be among those awaited";
  watch.Expire(now_ + 1000, map_);  // no outcome came: each may have gone up it
  EXPECT_EQ(watch.awaiting(), 0u);
  EXPECT_FALSE(withdrawn(failing));
  EXPECT_FALSE(withdrawn({})) << "lost or unanswered, a cut draw may have gone any way";
  // Outcomes after the wait change nothing.
  for (const std::uint64_t k : cut) watch.AddOutcome(k, true, map_);
  EXPECT_FALSE(withdrawn({}));
}

// Nothing fails on a link routing withdrew, so the draws awaiting their
// outcome (a standing few hundred per rail switch at fleet scale, most of
// them cut by rate limits) do not hold it back; a link named for its loss
// they do.
TEST_F(RouteWatchTest, DrawsAwaitingTheirOutcomeDoNotHideALinkNothingFailsOn) {
  const LinkId down = fleet_.RailSpine(0, 0);
  Add(Trace(0, 0), true);
  for (int i = 0; i < 600; ++i) {
    const PathRecord p = i % 3 == 0 ? CutShort(0) : Trace(0, 1 + i % 3);
    watch_.AddTrace(p, true, map_, Key(p));  // the cut ones await their outcome
  }
  ASSERT_EQ(watch_.awaiting(), 200u);
  EXPECT_TRUE(Withdrawn(down)) << "400 draws avoided it; those awaited say nothing yet";
  std::vector<char> failing(map_.links.size(), 0);
  failing[down] = 1;
  const auto gone = watch_.Withdrawn(map_, failing);
  EXPECT_TRUE(std::none_of(gone.begin(), gone.end(), [&](const WithdrawnLink& w) {
    return w.link == down;
  })) << "named for its loss, it may be eating those 200 traces";
}

// A window is judged on the draws traced before its end: a link that goes
// down in its grace is the next window's, whatever the watch knows by the
// time it judges.
TEST_F(RouteWatchTest, AWindowIsJudgedOnTheDrawsBeforeItsEnd) {
  const LinkId down = fleet_.RailSpine(0, 0);
  constexpr std::int64_t kEnd = 1000, kNext = 2000;
  for (int i = 0; i < 200; ++i) Add(Trace(0, i % 4), true);
  watch_.Close(kEnd);
  for (int i = 0; i < 200; ++i) Add(Trace(0, 1 + i % 3), true);  // it went down
  const auto named = [&](std::int64_t as_of) {
    const auto gone = watch_.Withdrawn(map_, {}, as_of);
    return std::any_of(gone.begin(), gone.end(),
                       [&](const WithdrawnLink& w) { return w.link == down; });
  };
  EXPECT_FALSE(named(kEnd)) << "in use up to the window's end";
  EXPECT_TRUE(named(kNext)) << "nothing kept for the next window's end: as things stand";
  EXPECT_TRUE(named(RouteWatch::kNow));
  watch_.Close(kNext);
  watch_.Forget(kNext);
  EXPECT_TRUE(named(kEnd)) << "forgotten: an earlier end reads the next one kept";
  EXPECT_TRUE(named(kNext));
  Add(Trace(0, 0), true);  // back in use after kNext
  watch_.Close(kEnd);      // a late trace of a window already closed keeps nothing
  EXPECT_TRUE(named(kEnd)) << "still the counts kept at kNext";
  EXPECT_FALSE(named(RouteWatch::kNow));
}

// Beyond its cap of draws awaiting outcomes, a cut-short draw counts at once
// as one any up-link may have picked, and is counted as an overflow.
TEST_F(RouteWatchTest, DrawsBeyondTheCapCountAtOnce) {
  RouteWatch watch(kAlpha, RouteWatch::kDefaultPendingTtlNs, /*max_pending=*/10);
  for (int i = 0; i < 30; ++i) {
    const PathRecord p = CutShort(0);
    watch.AddTrace(p, true, map_, Key(p));
  }
  EXPECT_EQ(watch.awaiting(), 10u);
  EXPECT_EQ(watch.overflow(), 20u);
}

TEST_F(RouteWatchTest, RetracesOfKnownPathsAndSilentHopsAreNoDraws) {
  const LinkId quiet = fleet_.RailSpine(0, 0);
  Add(Trace(0, 0), true);
  for (int i = 0; i < 1000; ++i) Add(Trace(0, 1), false);
  PathRecord silent = Trace(0, 2);
  silent.links[1] = silent.links[2] = kUnknown;  // rate-limited spine, trace went on
  for (int i = 0; i < 1000; ++i) Add(silent, true);
  EXPECT_FALSE(Withdrawn(quiet));
}

TEST_F(RouteWatchTest, ASwitchWithOneUpLinkHasNoChoiceToTest) {
  FabricMap map;
  map.switch_count = 2;
  map.links = {{kUnknown, 0}, {0, 1}, {kUnknown, 0}};
  RouteWatch watch(kAlpha);
  for (int i = 0; i < 1000; ++i) {
    PathRecord p;
    p.links = {0, kUnknown, 2};
    p.candidates = {{1, 1}};
    watch.AddTrace(p, true, map, i);
    watch.AddOutcome(i, false, map);
  }
  EXPECT_TRUE(watch.Withdrawn(map, {}).empty());
}

// One window of traffic through the analysis: new ports rotate in and are
// traced, from rail 0 over spine_of(port); every probe arrives. Returns the
// window's loss culprit on `link`, if any.
struct RoutedWindow {
  const SyntheticFleet& fleet;
  Analysis& analysis;
  std::uint16_t port = 50000;

  std::optional<Suspect> Run(int w, LinkId link, const std::function<std::uint32_t(int)>& spine_of,
                             std::int64_t extra_trace_ns = 0) {
    const std::int64_t s = FleetTest::kSecond, start = FleetTest::kT0 + w * 20 * s;
    for (HostId h = 0; h < 8; ++h) {
      for (int i = 0; i < 20; ++i, ++port) {
        const std::uint32_t spine = spine_of(port);
        PathRecord p{h,
                     0,
                     1,
                     port,
                     4791,
                     start,
                     {fleet.NicLink(h, 0), fleet.RailSpine(0, spine), fleet.RailSpine(1, spine),
                      fleet.NicLink(h, 1)}};
        if (extra_trace_ns != 0 && h == 0 && i == 0) {
          PathRecord odd = p;
          odd.time_ns = extra_trace_ns;
          analysis.AddPath(odd);
        }
        analysis.AddPath(p);
        ProbeRecord r;
        r.host = h;
        r.src_nic = 0;
        r.dst_nic = 1;
        r.src_port = port;
        r.dst_port = 4791;
        r.send_time_ns = r.t1_app_send_ns = start + i * s / 2;
        r.t2_nic_send_ns = r.t1_app_send_ns + 2000;
        r.t3_nic_recv_ns = r.t2_nic_send_ns + 8000;
        r.t4_app_recv_ns = r.t3_nic_recv_ns + 20000;
        analysis.AddResult(r);
      }
    }
    const auto reports = analysis.Advance(start + 30 * s);
    EXPECT_EQ(reports.size(), 1u);
    if (reports.size() != 1) return std::nullopt;
    culprits = reports[0].loss.culprits.size();
    for (const Suspect& c : reports[0].loss.culprits) {
      if (c.component.kind == Component::Kind::kLink && c.component.link == link) return c;
    }
    return std::nullopt;
  }
  std::size_t culprits = 0;  // of the last window
};

// Through the analysis: a link that went down and that routing avoids stays
// its culprit while new 5-tuples keep avoiding it, though no probe fails.
TEST(RouteWatchAnalysis, ADownLinkRoutedAroundStaysNamedWithNoFailure) {
  SyntheticFleet fleet(FleetShape{});
  Analysis analysis(AnalysisConfig{}, fleet.Map());
  const LinkId down = fleet.RailSpine(0, 0);
  RoutedWindow traffic{fleet, analysis};
  for (int w = 0; w < 4; ++w) {
    const auto named = traffic.Run(w, down, [](int port) { return 1 + port % 3; });
    ASSERT_TRUE(named.has_value()) << "window " << w;
    EXPECT_TRUE(named->routed_around);
    EXPECT_EQ(named->loss, 1.0);
    EXPECT_EQ(traffic.culprits, 1u) << "window " << w << ": nothing else";
  }
}

// A trace stamped an hour ahead (a clock gone wrong, or a hostile agent)
// must not freeze the counts every window until then is judged on: the link
// back in use is let go in the window it came back in.
TEST(RouteWatchAnalysis, ATraceFromTheFutureDoesNotFreezeTheRouteWatch) {
  SyntheticFleet fleet(FleetShape{});
  Analysis analysis(AnalysisConfig{}, fleet.Map());
  const LinkId down = fleet.RailSpine(0, 0);
  RoutedWindow traffic{fleet, analysis};
  const auto avoided = [](int port) { return 1 + port % 3; };
  ASSERT_TRUE(traffic.Run(0, down, avoided).has_value());
  const std::int64_t hour_ahead = FleetTest::kT0 + 3600 * FleetTest::kSecond;
  ASSERT_TRUE(traffic.Run(1, down, avoided, hour_ahead).has_value());
  EXPECT_FALSE(traffic.Run(2, down, [](int port) { return port % 4; }).has_value())
      << "back in use in window 2";
}

}  // namespace
}  // namespace hostmesh::analysis::testing
