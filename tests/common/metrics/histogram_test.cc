// Observations land in the right bucket; `le` is inclusive.
#include "common/metrics/histogram.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace hostmesh::metrics {
namespace {

using ::testing::ElementsAre;

SeriesSnapshot Snap(const Histogram& h) {
  SeriesSnapshot s;
  h.SnapshotInto(s);
  return s;
}

TEST(MetricsHistogram, ValueOnABoundCountsInThatBucket) {
  Histogram h({1, 2, 5});
  h.Observe(1);
  EXPECT_THAT(Snap(h).cumulative_counts, ElementsAre(1, 1, 1, 1));
  h.Observe(2);
  h.Observe(5);
  EXPECT_THAT(Snap(h).cumulative_counts, ElementsAre(1, 2, 3, 3));
}

TEST(MetricsHistogram, ValueJustAboveABoundCountsInTheNextBucket) {
  Histogram h({1, 2, 5});
  h.Observe(std::nextafter(1.0, 2.0));
  h.Observe(std::nextafter(5.0, 6.0));
  EXPECT_THAT(Snap(h).cumulative_counts, ElementsAre(0, 1, 1, 2));
}

TEST(MetricsHistogram, SmallAndNegativeValuesCountInTheFirstBucket) {
  Histogram h({1, 2});
  h.Observe(0);
  h.Observe(-3);
  const SeriesSnapshot s = Snap(h);
  EXPECT_THAT(s.cumulative_counts, ElementsAre(2, 2, 2));
  EXPECT_EQ(s.sum, -3);
}

TEST(MetricsHistogram, InfinityAndNaNCountInInfBucket) {
  Histogram h({1});
  h.Observe(std::numeric_limits<double>::infinity());
  EXPECT_THAT(Snap(h).cumulative_counts, ElementsAre(0, 1));
  h.Observe(std::nan(""));
  const SeriesSnapshot s = Snap(h);
  EXPECT_THAT(s.cumulative_counts, ElementsAre(0, 2));
  EXPECT_TRUE(std::isnan(s.sum));
}

TEST(MetricsHistogram, SumAddsObservations) {
  Histogram h({0.001, 0.01});
  h.Observe(0.0005);
  h.Observe(0.25);
  EXPECT_DOUBLE_EQ(Snap(h).sum, 0.2505);
}

TEST(MetricsHistogram, NoBoundsMeansOneInfBucket) {
  Histogram h({});
  h.Observe(7);
  EXPECT_THAT(Snap(h).cumulative_counts, ElementsAre(1));
}

TEST(MetricsHistogram, RejectsBoundsOutOfOrder) {
  EXPECT_THROW(Histogram({2, 1}), std::invalid_argument);
}

}  // namespace
}  // namespace hostmesh::metrics
