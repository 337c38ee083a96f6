#include "agent/verbs/clock_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

namespace hostmesh::agent::verbs {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kHostStart = 1'704'067'200 * kSecond;  // 2024-01-01, realtime ns

// A free-running NIC counter: nominal `khz`, off by `drift_ppm`, starting at
// an arbitrary tick, counting modulo mask + 1.
struct SyntheticNic {
  std::uint64_t khz = 156'250;  // ConnectX-class 156.25 MHz: 6.4 ns per tick
  double drift_ppm = 0;
  std::uint64_t tick0 = 0x1234'5678'9ABCull;
  std::uint64_t mask = ~std::uint64_t{0};

  std::uint64_t TicksAt(std::int64_t host_ns) const {
    const double elapsed = static_cast<double>(host_ns - kHostStart);
    const double ticks = elapsed * static_cast<double>(khz) / 1e6 * (1 + drift_ppm / 1e6);
    return (tick0 + static_cast<std::uint64_t>(std::llround(ticks))) & mask;
  }
  double ns_per_tick() const { return 1e6 / static_cast<double>(khz); }
  // A sample whose NIC read happened at `read_ns`, with the host reads
  // `before` and `after` ns around it.
  ClockSample Sample(std::int64_t read_ns, std::int64_t before, std::int64_t after) const {
    return ClockSample{read_ns - before, TicksAt(read_ns), read_ns + after};
  }
};

ClockFitOptions OptionsFor(const SyntheticNic& nic) {
  ClockFitOptions options;
  options.nic_clock_khz = nic.khz;
  options.counter_mask = nic.mask;
  return options;
}

TEST(ClockFit, NotReadyBeforeTheFirstSample) {
  ClockFit fit(OptionsFor(SyntheticNic{}));
  EXPECT_FALSE(fit.ready());
  EXPECT_FALSE(fit.ToHostNs(12345).has_value());
  EXPECT_EQ(fit.error_bound_ns(), 0);
}

TEST(ClockFit, OneSampleGivesOffsetAtNominalRate) {
  SyntheticNic nic;
  ClockFit fit(OptionsFor(nic));
  ASSERT_TRUE(fit.AddSample(nic.Sample(kHostStart + kSecond, 500, 500)));
  ASSERT_TRUE(fit.ready());
  EXPECT_EQ(fit.error_bound_ns(), 500);  // half the bracket, no residual
  const std::int64_t t = kHostStart + kSecond + 1'000'000;
  EXPECT_NEAR(static_cast<double>(*fit.ToHostNs(nic.TicksAt(t))), static_cast<double>(t),
              nic.ns_per_tick());
}

TEST(ClockFit, FitsOffsetAndDriftUnderJitterWithinTheReportedBound) {
  SyntheticNic nic;
  nic.drift_ppm = 37;
  ClockFit fit(OptionsFor(nic));
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> jitter(100, 2'000);
  std::int64_t last = 0;
  for (int i = 0; i < 200; ++i) {
    last = kHostStart + i * kSecond;
    ASSERT_TRUE(fit.AddSample(nic.Sample(last, jitter(rng), jitter(rng))));
  }
  EXPECT_NEAR(fit.drift_ppm(), 37, 1.0);
  EXPECT_GT(fit.residual_ns(), 0);  // asymmetric jitter leaves a residual, and it is reported
  EXPECT_LT(fit.error_bound_ns(), 5'000);
  // Completions happen between samples, either side of the newest one.
  std::uniform_int_distribution<std::int64_t> when(last - 3 * kSecond, last + kSecond);
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t t = when(rng);
    const auto mapped = fit.ToHostNs(nic.TicksAt(t));
    ASSERT_TRUE(mapped.has_value());
    EXPECT_LE(std::abs(*mapped - t),
              fit.error_bound_ns() + static_cast<std::int64_t>(nic.ns_per_tick()) + 1)
        << "at +" << (t - last) << " ns from the newest sample";
  }
}

TEST(ClockFit, PrefersTheNarrowestBrackets) {
  // Every other sample was preempted: a 100 us bracket whose NIC read came
  // right after the first host read, so its midpoint is 50 us late.
  SyntheticNic nic;
  nic.drift_ppm = -12;
  ClockFitOptions options = OptionsFor(nic);
  options.window = 40;
  options.fit_samples = 10;
  ClockFit narrow(options);
  options.fit_samples = options.window;  // a fit of everything, for contrast
  ClockFit everything(options);
  std::int64_t last = 0;
  for (int i = 0; i < 80; ++i) {
    last = kHostStart + i * kSecond / 2;
    const ClockSample s = (i % 2 == 0) ? nic.Sample(last, 100, 100) : nic.Sample(last, 0, 100'000);
    ASSERT_TRUE(narrow.AddSample(s));
    ASSERT_TRUE(everything.AddSample(s));
  }
  const std::int64_t t = last + kSecond / 4;
  const std::int64_t narrow_error = std::abs(*narrow.ToHostNs(nic.TicksAt(t)) - t);
  const std::int64_t wide_error = std::abs(*everything.ToHostNs(nic.TicksAt(t)) - t);
  EXPECT_LT(narrow_error, 200);
  EXPECT_GT(wide_error, 10'000);
  EXPECT_LE(narrow.error_bound_ns(), 200);
  EXPECT_GE(everything.error_bound_ns(), 50'000);  // and it says so
}

TEST(ClockFit, UnwrapsACounterThatWrapsBetweenSamples) {
  SyntheticNic nic;
  nic.khz = 1'000'000;        // 1 GHz
  nic.mask = 0xFFFF'FFFFull;  // 32 bits: wraps every 4.29 s
  nic.drift_ppm = 20;
  ClockFit fit(OptionsFor(nic));
  ASSERT_TRUE(fit.half_wrap_period_ns().has_value());
  EXPECT_NEAR(static_cast<double>(*fit.half_wrap_period_ns()), 2.147e9, 1e6);
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::int64_t> jitter(50, 500);
  std::int64_t t = kHostStart;
  for (int i = 0; i < 60; ++i) {
    t += kSecond;
    ASSERT_TRUE(fit.AddSample(nic.Sample(t, jitter(rng), jitter(rng))));
  }
  EXPECT_NEAR(fit.drift_ppm(), 20, 1.0);
  // A gap of 10 s (more than two wraps): the host clock says how many wraps were missed.
  t += 10 * kSecond;
  ASSERT_TRUE(fit.AddSample(nic.Sample(t, 200, 200)));
  EXPECT_NEAR(fit.drift_ppm(), 20, 1.0);
  for (std::int64_t dt : {-900'000'000LL, -1'000LL, 0LL, 1'000LL, 900'000'000LL}) {
    const auto mapped = fit.ToHostNs(nic.TicksAt(t + dt));
    ASSERT_TRUE(mapped.has_value());
    EXPECT_LE(std::abs(*mapped - (t + dt)), fit.error_bound_ns() + 1) << dt;
  }
}

TEST(ClockFit, A63BitMaskLikeMlx5NeedsNoUnwrapping) {
  SyntheticNic nic;
  nic.mask = 0x7FFF'FFFF'FFFF'FFFFull;
  nic.drift_ppm = 5;
  ClockFit fit(OptionsFor(nic));
  EXPECT_FALSE(fit.half_wrap_period_ns().has_value());
  std::int64_t t = kHostStart;
  for (int i = 0; i < 10; ++i) {
    t += kSecond;
    ASSERT_TRUE(fit.AddSample(nic.Sample(t, 100, 100)));
  }
  for (std::int64_t dt : {-500'000'000LL, 0LL, 500'000'000LL}) {
    EXPECT_LE(std::abs(*fit.ToHostNs(nic.TicksAt(t + dt)) - (t + dt)), fit.error_bound_ns() + 7);
  }
}

TEST(ClockFit, SlidingWindowFollowsAChangedDrift) {
  // A NIC clock re-disciplined mid-run: +50 ppm, then -50 ppm from `change`
  // on, continuously. Old samples must age out of the window.
  SyntheticNic nic;
  nic.drift_ppm = 50;
  const std::int64_t change = kHostStart + 30 * kSecond;
  auto ticks_at = [&](std::int64_t t) -> std::uint64_t {
    if (t <= change) return nic.TicksAt(t);
    const double extra = static_cast<double>(t - change) / nic.ns_per_tick() * (1 - 50 / 1e6);
    return nic.TicksAt(change) + static_cast<std::uint64_t>(std::llround(extra));
  };
  ClockFitOptions options = OptionsFor(nic);
  options.window = 20;
  ClockFit fit(options);
  std::int64_t t = kHostStart;
  for (int i = 0; i < 30; ++i) {
    t += kSecond;
    ASSERT_TRUE(fit.AddSample(ClockSample{t - 100, ticks_at(t), t + 100}));
  }
  EXPECT_NEAR(fit.drift_ppm(), 50, 0.5);
  for (int i = 0; i < 30; ++i) {
    t += kSecond;
    ASSERT_TRUE(fit.AddSample(ClockSample{t - 100, ticks_at(t), t + 100}));
  }
  EXPECT_NEAR(fit.drift_ppm(), -50, 0.5);
  EXPECT_EQ(fit.sample_count(), 20u);
}

TEST(ClockFit, RejectsInvertedBracketsAndHostTimeGoingBack) {
  SyntheticNic nic;
  ClockFit fit(OptionsFor(nic));
  EXPECT_FALSE(fit.AddSample(ClockSample{kHostStart + 10, 5, kHostStart}));
  ASSERT_TRUE(fit.AddSample(nic.Sample(kHostStart + kSecond, 100, 100)));
  EXPECT_FALSE(fit.AddSample(nic.Sample(kHostStart, 100, 100)));  // host clock stepped back
  EXPECT_EQ(fit.sample_count(), 1u);
}

TEST(ClockFit, A64BitCounterThatGoesBackRestartsTheFit) {
  SyntheticNic nic;
  ClockFit fit(OptionsFor(nic));
  for (int i = 1; i <= 5; ++i) fit.AddSample(nic.Sample(kHostStart + i * kSecond, 100, 100));
  EXPECT_EQ(fit.sample_count(), 5u);
  // NIC reset: the counter restarts near zero.
  ASSERT_TRUE(fit.AddSample(ClockSample{kHostStart + 6 * kSecond, 42, kHostStart + 6 * kSecond}));
  EXPECT_EQ(fit.sample_count(), 1u);
  EXPECT_EQ(*fit.ToHostNs(42), kHostStart + 6 * kSecond);
}

}  // namespace
}  // namespace hostmesh::agent::verbs
