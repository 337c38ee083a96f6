// Which hosts shed load in which window, from the state their batches carry.
#include "analyzer/analysis/shedding_book.h"

#include <gtest/gtest.h>

namespace hostmesh::analysis {
namespace {

constexpr std::int64_t kS = 1'000'000'000;

TEST(SheddingBook, AHostShedsInEveryWindowItsStateTouches) {
  SheddingBook book;
  book.Note(0, 5 * kS, 1.0, 0, "", true);
  book.Note(0, 25 * kS, 0.5, 24 * kS, "cgroup cpu throttled 90%", true);
  book.Note(0, 27 * kS, 0.5, 24 * kS, "cgroup cpu throttled 90%", true);  // same state: no change
  book.Note(0, 31 * kS, 0.1, 30 * kS, "cgroup cpu throttled 99%", true);
  book.Note(0, 70 * kS, 1.0, 69 * kS, "cgroup cpu throttled 0%", true);
  book.Note(1, 5 * kS, 1.0, 0, "", true);
  const std::vector<HostId> both = {0, 1};

  EXPECT_TRUE(book.ForWindow(0, 20 * kS, both).empty()) << "full rate before 25 s";
  auto w = book.ForWindow(20 * kS, 40 * kS, both);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].host, 0u);
  EXPECT_DOUBLE_EQ(w[0].rate_fraction, 0.1);
  EXPECT_DOUBLE_EQ(w[0].lowest_fraction, 0.1);
  EXPECT_EQ(w[0].since_ns, 30 * kS);
  EXPECT_EQ(w[0].cause, "cgroup cpu throttled 99%");
  w = book.ForWindow(40 * kS, 60 * kS, both);  // no batch said anything new: still at 0.1
  ASSERT_EQ(w.size(), 1u);
  EXPECT_DOUBLE_EQ(w[0].rate_fraction, 0.1);
  w = book.ForWindow(60 * kS, 80 * kS, both);  // back up within the window
  ASSERT_EQ(w.size(), 1u);
  EXPECT_DOUBLE_EQ(w[0].rate_fraction, 1.0);
  EXPECT_DOUBLE_EQ(w[0].lowest_fraction, 0.1);
  EXPECT_EQ(w[0].cause, "cgroup cpu throttled 99%") << "the cause of the shedding, not of the end";
  EXPECT_TRUE(book.ForWindow(80 * kS, 100 * kS, both).empty());
}

TEST(SheddingBook, OnlyPresentHostsAreListed) {
  SheddingBook book;
  book.Note(3, 5 * kS, 0.25, 4 * kS, "host cpu pressure 75%", true);
  EXPECT_TRUE(book.ForWindow(0, 20 * kS, {0, 1, 2}).empty());
  ASSERT_EQ(book.ForWindow(20 * kS, 40 * kS, {3}).size(), 1u);
}

TEST(SheddingBook, AFlappingAgentHoldsABoundedHistory) {
  SheddingBook book;
  for (int i = 0; i < 10'000; ++i) {
    book.Note(0, i * kS, (i % 2) != 0 ? 0.5 : 1.0, i * kS, "x", true);
  }
  // Only the newest kMaxChangesPerHost changes are kept; the window at the
  // end still sees the flapping.
  const auto w = book.ForWindow(9'990 * kS, 10'000 * kS, {0});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_DOUBLE_EQ(w[0].lowest_fraction, 0.5);
}

TEST(SheddingBook, AResentOlderBatchChangesNothing) {
  SheddingBook book;
  book.Note(0, 30 * kS, 0.5, 29 * kS, "a", true);
  book.Note(0, 10 * kS, 0.1, 9 * kS, "old", true);
  const auto w = book.ForWindow(0, 40 * kS, {0});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_DOUBLE_EQ(w[0].lowest_fraction, 0.5);
}

}  // namespace
}  // namespace hostmesh::analysis
