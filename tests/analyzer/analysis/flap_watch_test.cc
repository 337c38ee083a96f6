// Flap watch (flap_watch.h) on outcomes in time order: a flap alternates
// down phases, where every probe is lost, with clean ones, within a window or
// across two; a steady loss that starts or ends inside the window, or a lossy
// component that goes down, is no flap however clustered its failures look
// against the clean part.

#include "analyzer/analysis/flap_watch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace hostmesh::analysis {
namespace {

constexpr std::int64_t kWindowNs = 20'000'000'000;

// Appends `count` outcomes failing at `loss` (deterministic pseudo-random).
class Outcomes {
 public:
  Outcomes& Add(int count, double loss) {
    for (int i = 0; i < count; ++i) {
      x_ = x_ * 6364136223846793005ULL + 1442695040888963407ULL;
      failed_.push_back(static_cast<double>(x_ >> 11) * 0x1.0p-53 < loss);
    }
    return *this;
  }
  FlapVerdict Judge() const {
    std::unique_ptr<bool[]> b(new bool[failed_.size()]);
    for (std::size_t i = 0; i < failed_.size(); ++i) b[i] = failed_[i] != 0;
    return JudgeOutcomes(std::span<const bool>(b.get(), failed_.size()), kWindowNs);
  }

 private:
  std::uint64_t x_ = 12345;
  std::vector<char> failed_;
};

TEST(FlapWatch, DownPhasesAlternatingWithCleanOnesAreAFlap) {
  Outcomes o;
  for (int i = 0; i < 4; ++i) o.Add(100, 0).Add(60, 1);  // 4 down episodes in the window
  o.Add(100, 0);
  const FlapVerdict v = o.Judge();
  EXPECT_TRUE(v.flapping);
  EXPECT_EQ(v.flaps, 4u);
  EXPECT_NEAR(v.period_s, 5.0, 1e-9);
}

TEST(FlapWatch, AFlapWithStrayOutcomesIsStillAFlap) {
  // Background loss in the up phases, a probe on a stale path getting through
  // in the down ones.
  Outcomes o;
  for (int i = 0; i < 3; ++i) o.Add(200, 0.002).Add(80, 0.97);
  o.Add(200, 0.002);
  EXPECT_TRUE(o.Judge().flapping);
}

TEST(FlapWatch, ASteadyHighLossStartingInTheWindowIsNoFlap) {
  // Clean, then 90% lost for good: the onset clusters the failures (the runs
  // test alone reads it as bursts), and runs of failures abound.
  for (const double loss : {0.6, 0.9, 0.97}) {
    Outcomes o;
    o.Add(800, 0).Add(1200, loss);
    EXPECT_FALSE(o.Judge().flapping) << loss;
  }
}

TEST(FlapWatch, ALossEndingInTheWindowIsNoFlap) {
  Outcomes o;
  o.Add(1100, 0.25).Add(900, 0);
  EXPECT_FALSE(o.Judge().flapping);
}

TEST(FlapWatch, LossyThenDownIsOneEpisodeNotAFlap) {
  Outcomes o;
  o.Add(300, 0).Add(800, 0.3).Add(800, 1);
  const FlapVerdict v = o.Judge();
  EXPECT_FALSE(v.flapping);
  EXPECT_LE(v.flaps, 1u);
}

TEST(FlapWatch, OneDownEpisodeInsideTheWindowIsNoFlap) {
  Outcomes o;
  o.Add(800, 0.001).Add(300, 1).Add(800, 0.001);
  EXPECT_FALSE(o.Judge().flapping);
}

TEST(FlapWatch, PairsOfFailuresAtALowLossAreNoFlap) {
  // An RNIC losing 3%, seen in the simulator: two of its failures came in
  // pairs, which at so few failures the runs test alone reads as clustered.
  std::vector<char> failed(375, 0);
  for (const int at : {0, 1, 29, 92, 160, 183, 250, 253, 335, 346, 360, 373, 374}) failed[at] = 1;
  std::unique_ptr<bool[]> b(new bool[failed.size()]);
  for (std::size_t i = 0; i < failed.size(); ++i) b[i] = failed[i] != 0;
  const FlapVerdict v = JudgeOutcomes(std::span<const bool>(b.get(), failed.size()), kWindowNs);
  EXPECT_LT(v.runs_z, -4);
  EXPECT_FALSE(v.flapping);
}

TEST(FlapWatch, SteadyLossIsNoFlapAtAnyRate) {
  for (const double loss : {0.02, 0.3, 0.6, 0.93}) {
    Outcomes o;
    o.Add(3000, loss);
    EXPECT_FALSE(o.Judge().flapping) << loss;
  }
}

// Flaps slower than a window: one down episode per window.
TEST(FlapWatch, DownBackUpAndDownAgainInTheNextWindowIsAFlap) {
  FlapHistory history;
  const std::uint64_t key = FlapHistory::LinkKey(7);
  const FlapVerdict first = Outcomes().Add(600, 0).Add(800, 1).Add(600, 0).Judge();
  EXPECT_FALSE(first.flapping);
  EXPECT_TRUE(first.came_back);
  EXPECT_FALSE(history.Judge(key, first, 0, kWindowNs).flapping);
  const FlapVerdict second = Outcomes().Add(900, 0).Add(1100, 1).Judge();
  EXPECT_FALSE(second.flapping);
  const FlapVerdict judged = history.Judge(key, second, kWindowNs, 2 * kWindowNs);
  EXPECT_TRUE(judged.flapping);
  EXPECT_EQ(judged.flaps, 1u);
  // Another component, or the same one a window later, has no such past.
  EXPECT_FALSE(
      history.Judge(FlapHistory::RnicKey(7, 0), second, kWindowNs, 2 * kWindowNs).flapping);
}

TEST(FlapWatch, DownOnceAndBackIsNoFlapAcrossWindows) {
  FlapHistory history;
  const std::uint64_t key = FlapHistory::RnicKey(3, 1);
  // Went down in window 0, stayed down through window 1, back in window 2.
  const FlapVerdict went = Outcomes().Add(1000, 0).Add(1000, 1).Judge();
  EXPECT_FALSE(went.came_back);
  EXPECT_FALSE(history.Judge(key, went, 0, kWindowNs).flapping);
  const FlapVerdict back = Outcomes().Add(700, 1).Add(1300, 0.0005).Judge();
  EXPECT_TRUE(back.came_back);
  EXPECT_FALSE(history.Judge(key, back, 2 * kWindowNs, 3 * kWindowNs).flapping);
  // A clean window between: the next episode is not the same flapping.
  history.Prune(4 * kWindowNs);
  EXPECT_EQ(history.size(), 0u);
  const FlapVerdict again = Outcomes().Add(1000, 0).Add(1000, 1).Judge();
  EXPECT_FALSE(history.Judge(key, again, 4 * kWindowNs, 5 * kWindowNs).flapping);
}

// Link 1 goes down for the first second of every four; link 2, beside it,
// fails while it is down and once between. The overlap counts its failures
// inside those episodes and its probes inside and outside them.
TEST(FlapWatch, FailuresWhileDownCountsProbesInsideAndOutsideTheEpisodes) {
  FlapWatchList watch;
  watch.AddLink(1);
  watch.AddLink(2);
  FlapRecorder recorder(watch, 0);
  const auto probe = [&](LinkId link, std::int64_t ms, bool failed) {
    ProbeRecord r;
    r.send_time_ns = ms * 1'000'000;
    r.timeout = failed;
    const LinkId middle[] = {link};
    recorder.Record(r, middle);
  };
  for (std::int64_t ms = 0; ms < 20'000; ms += 100) {
    const bool down = ms % 4'000 < 1'000;
    probe(1, ms, down);
    probe(2, ms + 50, down && ms % 200 == 0);
  }
  probe(2, 2'550, true);  // between episodes
  const LinkId down[] = {1};
  const auto o = recorder.FailuresWhileDown(2, down);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->failures, 26u);
  EXPECT_EQ(o->inside, 25u);
  // Each episode's ten probes of link 2, and the one just before each
  // episode but the first (its next outcome of link 1 is a failure): 5 x 10
  // + 4 inside, the rest outside.
  EXPECT_EQ(o->inside_probes, 54u);
  EXPECT_EQ(o->outside_probes, 201u - 54u);
  EXPECT_EQ(o->outside, 1u);
  const LinkId unwatched[] = {9};
  EXPECT_FALSE(recorder.FailuresWhileDown(2, unwatched).has_value());
}

// Outside the episodes, a failure on a path that also crossed another
// watched link (a lossy downlink under the detour's spine) is not the
// detour's own: it is left out of the outside test, probe and failure.
TEST(FlapWatch, FailuresOutsideTheEpisodesOnAnotherWatchedLinkAreNotALinksOwn) {
  FlapWatchList watch;
  watch.AddLink(1);  // flapping
  watch.AddLink(2);  // its detour
  watch.AddLink(3);  // lossy, under the detour's spine
  FlapRecorder recorder(watch, 0);
  const auto probe = [&](std::span<const LinkId> middle, std::int64_t ms, bool failed) {
    ProbeRecord r;
    r.send_time_ns = ms * 1'000'000;
    r.timeout = failed;
    recorder.Record(r, middle);
  };
  const LinkId flap[] = {1}, detour[] = {2}, both[] = {2, 3};
  for (std::int64_t ms = 0; ms < 10'000; ms += 100) {
    probe(flap, ms, ms >= 1'000 && ms < 2'000);
    probe(detour, ms + 50, ms >= 1'000 && ms < 2'000);
    probe(both, ms + 60, ms >= 5'000 && ms % 500 == 0);  // the lossy link's
  }
  const LinkId down[] = {1};
  const auto o = recorder.FailuresWhileDown(2, down);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->failures, 10u + 10u);
  EXPECT_EQ(o->inside, 10u);
  EXPECT_EQ(o->outside, 0u);
  // Its own probes: 100, less the ten in the episode and the one just before it.
  EXPECT_EQ(o->outside_probes, 100u - 10u - 1u);
  const ChurnTest t{
      .background = 8.6e-4, .min_excess = 1.5e-3, .own_alpha = 1e-3, .inside_share = 1.0};
  EXPECT_TRUE(IsChurn(*o, t)) << "the lossy link's failures made the detour a fault of its own";
  // The lossy link's own count keeps them: it is judged on its own.
  const auto lossy = recorder.FailuresWhileDown(3, down);
  ASSERT_TRUE(lossy.has_value());
  EXPECT_EQ(lossy->failures, 10u);
}

// Counts with no probe shared with another watched link: every failure
// outside the episodes is the link's own.
ChurnOverlap Unshared(std::uint32_t failures, std::uint32_t inside, std::uint32_t inside_probes,
                      std::uint32_t outside_probes) {
  return {.failures = failures,
          .inside = inside,
          .inside_probes = inside_probes,
          .outside = failures - inside,
          .outside_probes = outside_probes};
}

// The churn test on counts from the simulator's fleets (p0 near 0.1% a path).
TEST(FlapWatch, ChurnIsWhatFailsOnlyInsideTheEpisodesBeyondTheBackground) {
  const ChurnTest t{
      .background = 8.6e-4, .min_excess = 1.5e-3, .own_alpha = 1e-3, .inside_share = 1.0};
  // A detour link: 13 failures inside, 2 outside over 4,500 probes, where
  // the background makes four.
  EXPECT_TRUE(IsChurn(Unshared(15, 13, 500, 4'500), t));
  // A 1.2% fault one way beside a link that went down: 5 of 816 outside is
  // six times the background, beyond chance.
  EXPECT_FALSE(IsChurn(Unshared(27, 22, 3'500, 816), t));
  // A 0.5% neighbour beside a flap: its own loss goes on between episodes.
  EXPECT_FALSE(IsChurn(Unshared(60, 35, 1'000, 5'000), t));
  // Beyond chance but below the excess worth a fault: the background's own
  // spread over many probes, not a fault.
  EXPECT_TRUE(IsChurn(Unshared(90, 60, 1'000, 20'000), t));
  // Nothing inside: no churn at all, whatever the rest says.
  EXPECT_FALSE(IsChurn(Unshared(3, 0, 100, 4'000), t));
  // A share set by the operator makes churn of what falls inside enough.
  ChurnTest share = t;
  share.inside_share = 0.8;
  EXPECT_TRUE(IsChurn(Unshared(27, 22, 3'500, 816), share));
}

}  // namespace
}  // namespace hostmesh::analysis
