// FindHotspots on hand-made fabrics of R rails x S spines: one fabric part per
// (rail, spine, rail), each path's latencies drawn around a median the test
// sets, so the fleet's spread, a hot link and the baselines are exact.

#include "analyzer/analysis/latency_hotspots.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

namespace hostmesh::analysis {
namespace {

class HotspotFabric {
 public:
  // The median latency of the path rail `from` -> spine -> rail `to`.
  using Medians = std::function<double(int from, int spine, int to)>;

  HotspotFabric(int rails, int spines) : rails_(rails), spines_(spines) {
    for (int a = 0; a < rails; ++a) {
      for (int b = 0; b < rails; ++b) {
        if (a == b) continue;
        for (int s = 0; s < spines; ++s) {
          PathRecord p{.host = 0,
                       .src_nic = static_cast<NicId>(a),
                       .dst_nic = static_cast<NicId>(b),
                       .src_port = static_cast<std::uint16_t>(1000 + s),
                       .links = {NicLink(a), Uplink(a, s), Uplink(b, s), NicLink(b)}};
          table_.Add(p);
        }
      }
    }
  }

  LinkId Uplink(int rail, int spine) const { return static_cast<LinkId>(rail * spines_ + spine); }
  std::size_t links() const { return static_cast<std::size_t>(rails_ * spines_); }

  // A probe's extra wait on path (from, spine, to), drawn from the rig's rng.
  using Wait = std::function<double(int from, int spine, int to, std::mt19937& rng)>;

  // One window of `probes` latencies per path: the path's median plus normal
  // noise of `jitter_ns`, plus any wait.
  std::vector<Hotspot> Window(const Medians& median, std::uint32_t probes, double jitter_ns,
                              const Wait& wait = {}, std::vector<Hotspot>* slow = nullptr) {
    std::vector<QuantileSketch> sketches(table_.middle_count());
    std::normal_distribution<double> noise(0, jitter_ns);
    for (int a = 0; a < rails_; ++a) {
      for (int b = 0; b < rails_; ++b) {
        if (a == b) continue;
        for (int s = 0; s < spines_; ++s) {
          const MiddleId id = table_.Lookup(0, static_cast<NicId>(a), static_cast<NicId>(b),
                                            static_cast<std::uint16_t>(1000 + s));
          for (std::uint32_t i = 0; i < probes; ++i) {
            const double extra = wait ? wait(a, s, b, rng_) : 0;
            sketches[id].Add(std::max(1.0, median(a, s, b) + noise(rng_) + extra));
          }
        }
      }
    }
    return FindHotspots(sketches, answered_, table_, links(), baselines_, params_, slow);
  }

  std::mt19937& rng() { return rng_; }
  // Every path's answered probes in the next windows (empty: those sketched).
  void SetAnswered(std::uint32_t probes) { answered_.assign(table_.middle_count(), probes); }
  HotspotParams& params() { return params_; }

 private:
  LinkId NicLink(int rail) const { return static_cast<LinkId>(links() + rail); }

  int rails_;
  int spines_;
  PathTable table_;
  LatencyBaselines baselines_;
  HotspotParams params_;
  std::vector<std::uint32_t> answered_;
  std::mt19937 rng_{7};
};

// A test rig like the emulated fabric: every spine a delay line of 200 us
// whose latency wanders from window to window (one offset for all its
// packets), every path a little offset of its own, probes jittering by 30 us.
struct JitteryRig {
  explicit JitteryRig(HotspotFabric& f) : fabric(f) {}
  HotspotFabric::Medians NextWindow(LinkId hot = kUnknown, double added_ns = 0) {
    std::normal_distribution<double> drift(0, 8'000);
    std::vector<double> spine(4);
    for (double& d : spine) d = drift(fabric.rng());
    return [=, this](int a, int s, int b) {
      double m = 200'000 + spine[static_cast<std::size_t>(s)] + path_offset(a, s, b);
      if (fabric.Uplink(a, s) == hot) m += added_ns;  // climbing to the spine
      return m;
    };
  }
  double path_offset(int a, int s, int b) const {
    return 4'000 * std::sin(13.0 * a + 7.0 * s + 3.0 * b);  // fixed per path
  }
  HotspotFabric& fabric;
};

TEST(LatencyHotspots, AJitteryDelayLineRigHasNoHotspotWindowAfterWindow) {
  // A spine's delay line drifting by 8 us (sigma) from window to window once
  // cleared the fixed 15 us bar every few windows somewhere on the fabric.
  HotspotFabric f(4, 4);
  JitteryRig rig(f);
  int hotspots = 0;
  for (int w = 0; w < 300; ++w)
    hotspots += static_cast<int>(f.Window(rig.NextWindow(), 60, 30'000).size());
  EXPECT_EQ(hotspots, 0);
}

TEST(LatencyHotspots, ALinkWellAboveTheRigsNoiseIsStillAHotspot) {
  HotspotFabric f(4, 4);
  JitteryRig rig(f);
  for (int w = 0; w < 5; ++w) f.Window(rig.NextWindow(), 60, 30'000);
  const LinkId hot = f.Uplink(1, 2);
  const auto found = f.Window(rig.NextWindow(hot, 200'000), 60, 30'000);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].link, hot);
  EXPECT_TRUE(found[0].up);
  EXPECT_NEAR(found[0].excess_ns, 200'000, 30'000);
}

// A RoCE fabric: paths of 5 us with cable differences of a few hundred ns.
HotspotFabric::Medians Quiet(const HotspotFabric& f, LinkId hot = kUnknown, bool up = true,
                             double added_ns = 0) {
  return [&f, hot, up, added_ns](int a, int s, int b) {
    double m = 5'000 + 300 * std::cos(5.0 * a + 11.0 * s + 2.0 * b);
    if (up && f.Uplink(a, s) == hot) m += added_ns;
    if (!up && f.Uplink(b, s) == hot) m += added_ns;
    return m;
  };
}

TEST(LatencyHotspots, TwentyMicrosecondsOfCongestionOnAQuietFabricIsFoundWithItsDirection) {
  HotspotFabric f(8, 8);
  for (int w = 0; w < 3; ++w) ASSERT_TRUE(f.Window(Quiet(f), 40, 1'000).empty());
  const LinkId hot = f.Uplink(2, 5);
  const auto found = f.Window(Quiet(f, hot, false, 20'000), 40, 1'000);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].link, hot);
  EXPECT_FALSE(found[0].up);  // coming down from the spine
  EXPECT_NEAR(found[0].excess_ns, 20'000, 1'000);
  EXPECT_EQ(found[0].paths, 7u);  // from each other rail
}

TEST(LatencyHotspots, AQueuesMeanWaitIsFoundByItsMedianAndEstimatedByItsMean) {
  // A port 90% busy: a tenth of the packets wait nothing, the rest an
  // exponential time, 20 us on average. Its median wait is only 13 us.
  HotspotFabric f(8, 8);
  for (int w = 0; w < 3; ++w) ASSERT_TRUE(f.Window(Quiet(f), 200, 1'000).empty());
  const LinkId hot = f.Uplink(3, 1);
  std::bernoulli_distribution busy(0.9);
  std::exponential_distribution<double> wait(0.9 / 20'000);
  const auto queue = [&](int a, int s, int, std::mt19937& rng) {
    return f.Uplink(a, s) == hot && busy(rng) ? wait(rng) : 0.0;
  };
  const auto found = f.Window(Quiet(f), 200, 1'000, queue);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].link, hot);
  EXPECT_NEAR(found[0].excess_ns, 13'000, 1'500);
  // The slowest percent is left out: a little under the mean.
  EXPECT_NEAR(found[0].added_ns, 19'000, 1'500);
}

TEST(LatencyHotspots, ALinkUnderTheBarButHalfOfItOverItsBaselineIsSlowNotHot) {
  HotspotFabric f(8, 8);
  for (int w = 0; w < 5; ++w) ASSERT_TRUE(f.Window(Quiet(f), 40, 1'000).empty());
  const double bar = f.params().min_excess_ns;
  const LinkId warm = f.Uplink(4, 6);
  std::vector<Hotspot> slow;
  EXPECT_TRUE(f.Window(Quiet(f, warm, true, 0.7 * bar), 40, 1'000, {}, &slow).empty());
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].link, warm);
  EXPECT_TRUE(slow[0].up);
  EXPECT_NEAR(slow[0].excess_ns, 0.7 * bar, 1'000);
  EXPECT_NEAR(slow[0].added_ns, 0.7 * bar, 1'000);
  slow.clear();
  EXPECT_TRUE(f.Window(Quiet(f, warm, true, 0.3 * bar), 40, 1'000, {}, &slow).empty());
  EXPECT_TRUE(slow.empty());
  const auto hot = f.Window(Quiet(f, warm, true, 1.5 * bar), 40, 1'000, {}, &slow);
  ASSERT_EQ(hot.size(), 1u);
  EXPECT_TRUE(slow.empty());  // hot, so not listed as merely slow
}

TEST(LatencyHotspots, PathsTracedLateInTheWindowDoNotStandForIt) {
  // Its latencies are from after its trace alone: a quarter of the window, in
  // which a burst of congestion may have been all there was.
  HotspotFabric f(8, 8);
  for (int w = 0; w < 3; ++w) ASSERT_TRUE(f.Window(Quiet(f), 40, 1'000).empty());
  const LinkId hot = f.Uplink(2, 2);
  f.SetAnswered(160);
  EXPECT_TRUE(f.Window(Quiet(f, hot, true, 30'000), 40, 1'000).empty());
  f.SetAnswered(60);  // two thirds of them sketched: it counts
  ASSERT_EQ(f.Window(Quiet(f, hot, true, 30'000), 40, 1'000).size(), 1u);
}

TEST(LatencyHotspots, ALinkFastInItsFirstWindowIsNoHotspotWhenItIsOrdinaryAgain) {
  // The first window a link is seen in (half the fleet traced, a cold cache)
  // must not become its baseline: back at the fleet's latency it is no hotspot.
  HotspotFabric f(4, 4);
  const LinkId odd = f.Uplink(0, 1);
  auto usual = [&](int a, int s, int b) { return 25'000 + Quiet(f)(a, s, b); };
  auto fast = [&](int a, int s, int b) {
    return usual(a, s, b) - (f.Uplink(a, s) == odd ? 16'000 : 0);
  };
  ASSERT_TRUE(f.Window(fast, 40, 1'000).empty());
  for (int w = 0; w < 5; ++w) EXPECT_TRUE(f.Window(usual, 40, 1'000).empty()) << "window " << w;
}

TEST(LatencyHotspots, ALinksUsualExcessBecomesItsBaseline) {
  // A link always 4 us slower than the fleet (a long cable, a deep buffer;
  // under half the bar, which is what a baseline may learn) is measured
  // against that: 20 us of congestion on it shows as 20, not 24.
  HotspotFabric f(8, 8);
  const LinkId slow = f.Uplink(3, 3);
  const double usual = 0.4 * f.params().min_excess_ns;
  for (int w = 0; w < 30; ++w) {
    ASSERT_TRUE(f.Window(Quiet(f, slow, true, usual), 40, 1'000).empty()) << "window " << w;
  }
  const auto found = f.Window(Quiet(f, slow, true, usual + 20'000), 40, 1'000);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].link, slow);
  EXPECT_NEAR(found[0].excess_ns, 20'000, 2'000);
}

}  // namespace
}  // namespace hostmesh::analysis
