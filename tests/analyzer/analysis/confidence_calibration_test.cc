// The confidence map and its isotonic fit (confidence_calibration.h), on
// hand-made counts.

#include "analyzer/analysis/confidence_calibration.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace hostmesh::analysis {
namespace {

CalibrationCounts Counts(std::array<std::uint64_t, kCalibrationBins> named,
                         std::array<std::uint64_t, kCalibrationBins> right) {
  CalibrationCounts c;
  c.named = named;
  c.right = right;
  return c;
}

bool Monotone(const ConfidenceMap& m) {
  for (std::size_t i = 1; i < m.points().size(); ++i) {
    if (m.points()[i].p < m.points()[i - 1].p || m.points()[i].raw <= m.points()[i - 1].raw) {
      return false;
    }
  }
  return true;
}

TEST(ConfidenceMap, NoPointsIsTheIdentity) {
  const ConfidenceMap m;
  EXPECT_DOUBLE_EQ(m.Apply(0.3), 0.3);
  EXPECT_DOUBLE_EQ(m.Apply(1.7), 1.0);
  EXPECT_DOUBLE_EQ(m.Apply(-1), 0.0);
}

TEST(ConfidenceMap, InterpolatesBetweenPointsAndIsFlatBeyond) {
  const ConfidenceMap m({{0.2, 0.1}, {0.6, 0.5}, {0.8, 0.9}});
  EXPECT_DOUBLE_EQ(m.Apply(0.0), 0.1);
  EXPECT_DOUBLE_EQ(m.Apply(0.2), 0.1);
  EXPECT_DOUBLE_EQ(m.Apply(0.4), 0.3);
  EXPECT_DOUBLE_EQ(m.Apply(0.7), 0.7);
  EXPECT_DOUBLE_EQ(m.Apply(1.0), 0.9);
}

TEST(ConfidenceMap, RejectsUnsortedDecreasingOrOutOfRangePoints) {
  EXPECT_NE(ConfidenceMap::Validate({{0.5, 0.2}, {0.5, 0.3}}), std::nullopt);  // raw repeated
  EXPECT_NE(ConfidenceMap::Validate({{0.5, 0.2}, {0.4, 0.3}}), std::nullopt);
  EXPECT_NE(ConfidenceMap::Validate({{0.1, 0.6}, {0.4, 0.3}}), std::nullopt);
  EXPECT_NE(ConfidenceMap::Validate({{0.1, 1.1}}), std::nullopt);
  EXPECT_NE(ConfidenceMap::Validate({{-0.1, 0.5}}), std::nullopt);
  EXPECT_EQ(ConfidenceMap::Validate({{0.1, 0.3}, {0.4, 0.3}}), std::nullopt);  // flat is fine
  EXPECT_THROW(ConfidenceMap({{0.5, 0.9}, {0.6, 0.1}}), std::invalid_argument);
}

TEST(ConfidenceMapFit, MonotoneCountsKeepTheirBinsWithThePrior) {
  // Bins 0.0-0.1 (2 of 10 right) and 0.9-1.0 (98 of 100).
  const auto m = ConfidenceMap::Fit(
      Counts({10, 0, 0, 0, 0, 0, 0, 0, 0, 100}, {2, 0, 0, 0, 0, 0, 0, 0, 0, 98}));
  ASSERT_EQ(m.points().size(), 2u);
  EXPECT_DOUBLE_EQ(m.points()[0].raw, 0.05);
  EXPECT_DOUBLE_EQ(m.points()[0].p, 0.25);  // (2 + 1) / (10 + 2)
  EXPECT_DOUBLE_EQ(m.points()[1].raw, 0.95);
  EXPECT_DOUBLE_EQ(m.points()[1].p, 0.971);  // 99 / 102, rounded
  EXPECT_NEAR(m.Apply(0.5), (0.25 + 0.971) / 2, 1e-12);
}

TEST(ConfidenceMapFit, ViolatorsArePooled) {
  // 0.2-0.3: 9 of 10 right, 0.4-0.5: 5 of 10, 0.8-0.9: 19 of 20. The middle
  // bin is below the first: both pool to (14 + 1) / (20 + 2).
  const auto m = ConfidenceMap::Fit(
      Counts({0, 0, 10, 0, 10, 0, 0, 0, 20, 0}, {0, 0, 9, 0, 5, 0, 0, 0, 19, 0}));
  ASSERT_EQ(m.points().size(), 3u);
  EXPECT_TRUE(Monotone(m));
  EXPECT_EQ(m.points()[0], (CalibrationPoint{0.25, 0.682}));
  EXPECT_EQ(m.points()[1], (CalibrationPoint{0.45, 0.682}));
  EXPECT_EQ(m.points()[2], (CalibrationPoint{0.85, 0.909}));  // 20 / 22
  EXPECT_DOUBLE_EQ(m.Apply(0.35), 0.682);
}

TEST(ConfidenceMapFit, ASmallBinIsNeverCertain) {
  // One verdict, right; one verdict, wrong: neither 1 nor 0.
  const auto right =
      ConfidenceMap::Fit(Counts({0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_NEAR(right.Apply(1.0), 2.0 / 3.0, 1e-3);
  const auto wrong =
      ConfidenceMap::Fit(Counts({1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_NEAR(wrong.Apply(0.0), 1.0 / 3.0, 1e-3);
}

TEST(ConfidenceMapFit, EveryBinDecreasingPoolsToOne) {
  const auto m = ConfidenceMap::Fit(
      Counts({10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, {10, 9, 8, 7, 6, 5, 4, 3, 2, 1}));
  ASSERT_EQ(m.points().size(), 2u);  // one flat block: its first and last bin
  EXPECT_TRUE(Monotone(m));
  EXPECT_DOUBLE_EQ(m.points().front().raw, 0.05);
  EXPECT_DOUBLE_EQ(m.points().back().raw, 0.95);
  EXPECT_DOUBLE_EQ(m.points().front().p, m.points().back().p);
  EXPECT_DOUBLE_EQ(m.points().front().p, 0.549);  // (55 + 1) / (100 + 2), rounded
}

TEST(ConfidenceMapFit, NoCountsIsTheIdentity) {
  EXPECT_TRUE(ConfidenceMap::Fit(CalibrationCounts{}).identity());
}

TEST(CalibrationCounts, BinsByTenthsWithOneInTheLast) {
  CalibrationCounts c;
  c.Add(0.0, true);
  c.Add(0.15, false);
  c.Add(1.0, true);
  c.Add(0.95, false);
  EXPECT_EQ(c.named[0], 1u);
  EXPECT_EQ(c.right[0], 1u);
  EXPECT_EQ(c.named[1], 1u);
  EXPECT_EQ(c.right[1], 0u);
  EXPECT_EQ(c.named[9], 2u);
  EXPECT_EQ(c.right[9], 1u);
  EXPECT_EQ(c.total(), 4u);
}

}  // namespace
}  // namespace hostmesh::analysis
