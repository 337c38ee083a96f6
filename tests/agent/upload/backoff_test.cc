#include "agent/upload/backoff.h"

#include <gtest/gtest.h>

namespace hostmesh::agent::upload {
namespace {

using namespace std::chrono_literals;
using std::chrono::nanoseconds;

UnitRandom Constant(double value) {
  return [value] { return value; };
}

constexpr double kAlmostOne = 0.999999;

TEST(upload_backoff, FullJitterCeilingDoublesUpToTheCap) {
  Backoff backoff(200ms, 3s, Jitter::kFull, Constant(kAlmostOne));
  std::vector<nanoseconds> delays;
  for (int i = 0; i < 7; ++i) delays.push_back(backoff.Next());
  const std::vector<nanoseconds> ceilings = {200ms, 400ms, 800ms, 1600ms, 3s, 3s, 3s};
  for (std::size_t i = 0; i < delays.size(); ++i) {
    EXPECT_LE(delays[i], ceilings[i]) << i;
    EXPECT_GE(delays[i], ceilings[i] * 0.999) << i;
  }
  EXPECT_EQ(backoff.attempts(), 7u);
}

TEST(upload_backoff, DecorrelatedGrowsAndIsCapped) {
  Backoff backoff(200ms, 3s, Jitter::kDecorrelated, Constant(kAlmostOne));
  nanoseconds previous = 0ns;
  for (int i = 0; i < 10; ++i) {
    const nanoseconds delay = backoff.Next();
    EXPECT_GE(delay, previous) << i;
    EXPECT_LE(delay, 3s) << i;
    previous = delay;
  }
  EXPECT_GE(previous, 2999ms) << "reaches the cap";
}

TEST(upload_backoff, LowestDrawsStayAtTheFloor) {
  Backoff full(200ms, 3s, Jitter::kFull, Constant(0.0));
  Backoff decorrelated(200ms, 3s, Jitter::kDecorrelated, Constant(0.0));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(full.Next(), 0ns);
    EXPECT_EQ(decorrelated.Next(), 200ms) << "decorrelated never goes below initial";
  }
}

TEST(upload_backoff, JitterStaysInBounds) {
  for (const Jitter jitter : {Jitter::kFull, Jitter::kDecorrelated}) {
    Backoff backoff(100ms, 5s, jitter, MakeUnitRandom(12345));
    nanoseconds previous = 100ms;
    nanoseconds low = 5s;
    nanoseconds high = 0ns;
    for (std::uint32_t i = 0; i < 2000; ++i) {
      const std::uint32_t attempt = i % 50;  // Reset every 50 draws, below
      const nanoseconds delay = backoff.Next();
      if (jitter == Jitter::kFull) {
        const nanoseconds ceiling =
            attempt < 6 ? std::min<nanoseconds>(100ms * (1 << attempt), 5s) : 5s;
        ASSERT_GE(delay, 0ns);
        ASSERT_LE(delay, ceiling) << i;
      } else {
        ASSERT_GE(delay, 100ms);
        ASSERT_LE(delay, std::min<nanoseconds>(previous * 3, 5s)) << i;
      }
      previous = delay;
      low = std::min(low, delay);
      high = std::max(high, delay);
      if (attempt == 49) {  // also exercise the early, narrow ranges again
        backoff.Reset();
        previous = 100ms;
      }
    }
    EXPECT_LT(low, 150ms) << "draws are spread, not constant";
    EXPECT_GT(high, 2s);
  }
}

TEST(upload_backoff, ResetStartsOver) {
  for (const Jitter jitter : {Jitter::kFull, Jitter::kDecorrelated}) {
    Backoff backoff(200ms, 30s, jitter, Constant(kAlmostOne));
    for (int i = 0; i < 20; ++i) backoff.Next();
    EXPECT_GT(backoff.Next(), 20s);
    backoff.Reset();
    EXPECT_EQ(backoff.attempts(), 0u);
    EXPECT_LE(backoff.Next(), jitter == Jitter::kFull ? 200ms : 600ms);
  }
}

TEST(upload_backoff, SeededRandomReplays) {
  Backoff a(200ms, 30s, Jitter::kDecorrelated, MakeUnitRandom(7));
  Backoff b(200ms, 30s, Jitter::kDecorrelated, MakeUnitRandom(7));
  for (int i = 0; i < 20; ++i) EXPECT_EQ(a.Next(), b.Next());
}

TEST(upload_backoff, MaxBelowInitialIsRaised) {
  Backoff backoff(1s, 10ms, Jitter::kDecorrelated, Constant(kAlmostOne));
  EXPECT_EQ(backoff.max(), 1s);
  EXPECT_EQ(backoff.Next(), 1s);
}

}  // namespace
}  // namespace hostmesh::agent::upload
