#include "agent/verbs/poll_chunks.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

namespace hostmesh::agent::verbs {
namespace {

// A CQ holding `pending` completions, polled at most `chunk` at a time.
struct FakeCq {
  std::size_t pending = 0;
  int error_after_calls = -1;  // >= 0: that call fails
  int calls = 0;
  std::uint64_t next_id = 1;

  CqPollResult operator()(std::span<Completion> chunk) {
    if (calls++ == error_after_calls) return CqPollResult{0, EIO};
    const std::size_t n = std::min(pending, chunk.size());
    for (std::size_t i = 0; i < n; ++i) chunk[i].wr_id = next_id++;
    pending -= n;
    return CqPollResult{n, 0};
  }
};

TEST(PollInChunks, FillsTheCallersWholeBatchFromSmallerChunks) {
  // The old plain poll returned 16 of 32 and the caller took it as drained.
  FakeCq cq{40};
  std::vector<Completion> out(32);
  const CqPollResult r = PollInChunks(out, 16, std::ref(cq));
  EXPECT_EQ(r.count, 32u);
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(cq.pending, 8u);
  for (std::size_t i = 0; i < 32; ++i) EXPECT_EQ(out[i].wr_id, i + 1);
}

TEST(PollInChunks, AShortChunkMeansDrainedAndStops) {
  FakeCq cq{20};
  std::vector<Completion> out(32);
  const CqPollResult r = PollInChunks(out, 16, std::ref(cq));
  EXPECT_EQ(r.count, 20u);
  EXPECT_EQ(cq.calls, 2);  // 16, then 4 (< 16): no third call
}

TEST(PollInChunks, AnExactMultipleNeedsOneEmptyPollToKnowItIsDrained) {
  FakeCq cq{16};
  std::vector<Completion> out(32);
  EXPECT_EQ(PollInChunks(out, 16, std::ref(cq)).count, 16u);
  EXPECT_EQ(cq.calls, 2);
}

TEST(PollInChunks, AnErrorKeepsWhatWasPolledAndReportsIt) {
  FakeCq cq{40, 1};
  std::vector<Completion> out(32);
  const CqPollResult r = PollInChunks(out, 16, std::ref(cq));
  EXPECT_EQ(r.count, 16u);
  EXPECT_EQ(r.error, EIO);
}

// An extended CQ holding `pending` completions, through its cursor.
struct FakeCursor {
  std::size_t pending = 0;
  int start_error = 0;     // returned by start() instead of 0 (EBUSY, EIO)
  int next_error_at = -1;  // >= 0: the next() call of that index fails with EIO
  int nexts = 0;
  int ends = 0;
  std::uint64_t next_id = 1;
  bool locked = false;

  CqPollResult Poll(std::span<Completion> out) {
    return PollCursor(
        out,
        [&] {
          if (start_error != 0) return start_error;
          if (pending == 0) return ENOENT;
          locked = true;
          return 0;
        },
        [&] {
          if (nexts++ == next_error_at) return EIO;
          return pending == 0 ? ENOENT : 0;
        },
        [&](Completion& c) {
          c.wr_id = next_id++;
          --pending;
        },
        [&] {
          ++ends;
          locked = false;
        });
  }
};

TEST(PollCursor, FillsTheWholeBatchThenTheRestAndEndsEachPoll) {
  FakeCursor cq{.pending = 40};
  std::vector<Completion> out(32);
  CqPollResult r = cq.Poll(out);
  EXPECT_EQ(r.count, 32u);  // full: the caller polls again
  EXPECT_EQ(out[31].wr_id, 32u);
  r = cq.Poll(out);
  EXPECT_EQ(r.count, 8u);  // fewer than asked: drained
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(out[7].wr_id, 40u);
  EXPECT_EQ(cq.ends, 2);
  EXPECT_FALSE(cq.locked);
  r = cq.Poll(out);  // empty: start says ENOENT, nothing to end
  EXPECT_EQ(r.count, 0u);
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(cq.ends, 2);
}

TEST(PollCursor, AFailedStartIsReportedAndNeverEnded) {
  for (int error : {EBUSY, EIO}) {
    FakeCursor cq{.pending = 5, .start_error = error};
    std::vector<Completion> out(8);
    const CqPollResult r = cq.Poll(out);
    EXPECT_EQ(r.count, 0u);
    EXPECT_EQ(r.error, error);
    EXPECT_EQ(cq.ends, 0);
  }
}

TEST(PollCursor, AnErrorMidwayKeepsWhatWasReadAndEnds) {
  FakeCursor cq{.pending = 10, .next_error_at = 2};
  std::vector<Completion> out(8);
  const CqPollResult r = cq.Poll(out);
  EXPECT_EQ(r.count, 3u);
  EXPECT_EQ(r.error, EIO);
  EXPECT_EQ(cq.ends, 1);
  EXPECT_FALSE(cq.locked);
}

}  // namespace
}  // namespace hostmesh::agent::verbs
