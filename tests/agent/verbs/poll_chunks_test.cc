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

}  // namespace
}  // namespace hostmesh::agent::verbs
