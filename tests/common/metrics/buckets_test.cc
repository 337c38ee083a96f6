// Bucket helpers produce readable, valid bounds and reject bad ones.
#include "common/metrics/buckets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace hostmesh::metrics {
namespace {

using ::testing::ElementsAre;

TEST(MetricsBuckets, ExponentialBoundsAreExactDecimals) {
  EXPECT_THAT(ExponentialBuckets(1e-6, 10, 7), ElementsAre(1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1));
  EXPECT_THAT(ExponentialBuckets(1, 2, 4), ElementsAre(1, 2, 4, 8));
}

TEST(MetricsBuckets, ExponentialRangeSpansMicrosecondToSecond) {
  const std::vector<double> bounds = ExponentialBucketsRange(1e-6, 1, 13);
  ASSERT_EQ(bounds.size(), 13u);
  EXPECT_EQ(bounds.front(), 1e-6);
  EXPECT_EQ(bounds[2], 1e-5);
  EXPECT_EQ(bounds.back(), 1);
  EXPECT_NO_THROW(ValidateBucketBounds(bounds));
}

TEST(MetricsBuckets, LinearBoundsAreExactDecimals) {
  EXPECT_THAT(LinearBuckets(0.1, 0.1, 3), ElementsAre(0.1, 0.2, 0.3));
}

TEST(MetricsBuckets, RejectsBadParameters) {
  EXPECT_THROW(ExponentialBuckets(0, 2, 3), std::invalid_argument);
  EXPECT_THROW(ExponentialBuckets(1, 1, 3), std::invalid_argument);
  EXPECT_THROW(ExponentialBuckets(1, 2, 0), std::invalid_argument);
  EXPECT_THROW(ExponentialBucketsRange(1, 1, 3), std::invalid_argument);
  EXPECT_THROW(ExponentialBucketsRange(1e-6, 1, 1), std::invalid_argument);
  EXPECT_THROW(LinearBuckets(0, 0, 3), std::invalid_argument);
}

TEST(MetricsBuckets, ValidationWantsFiniteStrictlyAscendingBounds) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_NO_THROW(ValidateBucketBounds(std::vector<double>{}));
  EXPECT_NO_THROW(ValidateBucketBounds(std::vector<double>{-1, 0, 1}));
  EXPECT_THROW(ValidateBucketBounds(std::vector<double>{1, 1}), std::invalid_argument);
  EXPECT_THROW(ValidateBucketBounds(std::vector<double>{2, 1}), std::invalid_argument);
  EXPECT_THROW(ValidateBucketBounds(std::vector<double>{1, inf}), std::invalid_argument);
  EXPECT_THROW(ValidateBucketBounds(std::vector<double>{std::nan(""), 1}), std::invalid_argument);
}

}  // namespace
}  // namespace hostmesh::metrics
