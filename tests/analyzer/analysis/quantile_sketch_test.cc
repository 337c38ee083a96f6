#include "analyzer/analysis/quantile_sketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace hostmesh::analysis {
namespace {

double Exact(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

void ExpectWithinAlpha(const QuantileSketch& s, const std::vector<double>& values) {
  for (double q : {0.0, 0.01, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    const double exact = Exact(values, q);
    EXPECT_LE(std::abs(s.Quantile(q) - exact), s.alpha() * exact + 1e-9)
        << "q=" << q << " exact=" << exact << " got=" << s.Quantile(q);
  }
}

TEST(QuantileSketch, RelativeErrorBoundOnHeavyTail) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> latency(std::log(10'000.0), 1.5);  // ns, spans 5 decades
  QuantileSketch s;
  std::vector<double> values;
  for (int i = 0; i < 200'000; ++i) {
    values.push_back(std::max(1.0, latency(rng)));
    s.Add(values.back());
  }
  EXPECT_EQ(s.count(), values.size());
  ExpectWithinAlpha(s, values);
}

TEST(QuantileSketch, MergeKeepsTheBoundAndEqualsOneSketch) {
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> a(1 / 20'000.0);
  std::uniform_real_distribution<double> b(1e5, 1e7);
  QuantileSketch left, right, both;
  std::vector<double> values;
  for (int i = 0; i < 50'000; ++i) {
    const double x = std::max(1.0, a(rng)), y = b(rng);
    left.Add(x);
    right.Add(y);
    both.Add(x);
    both.Add(y);
    values.push_back(x);
    values.push_back(y);
  }
  left.Merge(right);
  ExpectWithinAlpha(left, values);
  for (double q : {0.1, 0.5, 0.99}) EXPECT_DOUBLE_EQ(left.Quantile(q), both.Quantile(q));
}

TEST(QuantileSketch, NonPositiveValuesCountAsZero) {
  QuantileSketch s;
  for (int i = 0; i < 10; ++i) s.Add(-5);
  for (int i = 0; i < 10; ++i) s.Add(1000);
  EXPECT_EQ(s.Quantile(0.25), 0);
  EXPECT_NEAR(s.Quantile(0.9), 1000, 10);
  EXPECT_EQ(QuantileSketch{}.Quantile(0.5), 0);
}

TEST(QuantileSketch, TrimmedMeanIsTheMeanOfTheRanksBetweenItsBounds) {
  std::mt19937_64 rng(11);
  std::exponential_distribution<double> wait(1.0 / 20'000);  // a queue: 20 us mean
  QuantileSketch s;
  std::vector<double> values;
  for (int i = 0; i < 100'000; ++i) {
    values.push_back(wait(rng));
    s.Add(values.back());
  }
  s.Add(0.0);  // a zero takes a rank and adds nothing
  values.push_back(0.0);
  std::sort(values.begin(), values.end());
  for (const auto& [lo, hi] : {std::pair{0.0, 1.0}, {0.0, 0.99}, {0.1, 0.9}, {0.5, 0.51}}) {
    const auto a = static_cast<std::size_t>(lo * static_cast<double>(values.size()));
    const auto b = static_cast<std::size_t>(hi * static_cast<double>(values.size()));
    double exact = 0;
    for (std::size_t i = a; i < b; ++i) exact += values[i];
    exact /= static_cast<double>(b - a);
    EXPECT_NEAR(s.TrimmedMean(lo, hi), exact, s.alpha() * exact + 1.0) << lo << "-" << hi;
  }
  // The untrimmed mean is the queue's; trimming its top percent takes ~6% off.
  EXPECT_NEAR(s.TrimmedMean(0, 1), 20'000, 400);
  EXPECT_LT(s.TrimmedMean(0, 0.99), 0.97 * s.TrimmedMean(0, 1));
  EXPECT_EQ(QuantileSketch().TrimmedMean(0, 1), 0);
  EXPECT_EQ(s.TrimmedMean(0.5, 0.5), 0);
}

TEST(QuantileSketch, RejectsMergeOfDifferentAccuracy) {
  QuantileSketch a(0.01), b(0.02);
  EXPECT_THROW(a.Merge(b), std::invalid_argument);
}

}  // namespace
}  // namespace hostmesh::analysis
