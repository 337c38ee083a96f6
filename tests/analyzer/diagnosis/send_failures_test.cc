// The send failures of each window by RNIC, for the diagnosis: taken once per
// judged window, late ones refused, a cap on the RNICs held.
#include "analyzer/diagnosis/send_failures.h"

#include <gtest/gtest.h>

namespace hostmesh::analyzer::diagnosis {
namespace {

constexpr std::int64_t kW = 20'000'000'000;  // a 20 s window

TEST(send_failure_tally, CountsPerWindowAndRnicAndForgetsWhatWasTaken) {
  SendFailureTally tally(kW);
  tally.Add(3, 1, 5 * kW + 1);
  tally.Add(3, 1, 6 * kW - 1);
  tally.Add(3, 2, 5 * kW);
  tally.Add(3, 1, 6 * kW);  // the next window
  tally.Add(4, 1, 4 * kW);  // an earlier one, never judged: forgotten with it

  const SendFailures first = tally.Take(5 * kW);
  EXPECT_EQ(first.size(), 2u);
  EXPECT_EQ(first.at(RnicKey(3, 1)), 2u);
  EXPECT_EQ(first.at(RnicKey(3, 2)), 1u);
  EXPECT_TRUE(tally.Take(5 * kW).empty()) << "taken once";

  tally.Add(3, 1, 5 * kW + 7);  // for a window already judged
  EXPECT_EQ(tally.late(), 1u);
  const SendFailures second = tally.Take(6 * kW);
  EXPECT_EQ(second.size(), 1u);
  EXPECT_EQ(second.at(RnicKey(3, 1)), 1u);
  EXPECT_TRUE(tally.Take(7 * kW).empty());
}

TEST(send_failure_tally, RnicsPastTheCapAreCountedNotTallied) {
  SendFailureTally tally(kW);
  const std::size_t cap = SendFailureTally::kMaxEntries;
  for (std::size_t i = 0; i < cap; ++i) {
    tally.Add(static_cast<analysis::HostId>(i / 8), static_cast<analysis::NicId>(i % 8), kW);
  }
  tally.Add(1'000'000, 0, kW);      // one more RNIC: not tallied
  tally.Add(0, 0, kW);              // one already held: still counted
  tally.Add(1'000'001, 0, 2 * kW);  // nor a new one in another window
  EXPECT_EQ(tally.untallied(), 2u);
  const SendFailures taken = tally.Take(kW);
  EXPECT_EQ(taken.size(), cap);
  EXPECT_EQ(taken.at(RnicKey(0, 0)), 2u);
  // Taking a window frees its room.
  tally.Add(1'000'002, 0, 3 * kW);
  EXPECT_EQ(tally.Take(3 * kW).size(), 1u);
}

}  // namespace
}  // namespace hostmesh::analyzer::diagnosis
