#include "agent/udp/tx_stamp_fifo.h"

#include <gtest/gtest.h>

namespace hostmesh::agent::udp {
namespace {

using namespace std::chrono_literals;

const MonoTime kT0{1h};

PendingSend At(std::uint64_t sequence, MonoTime at) {
  return {sequence, 0, at};
}

TEST(TxStampFifo, IdsCountSendsFromZeroAndMatchInOrder) {
  TxStampFifo fifo;
  EXPECT_EQ(fifo.Push(At(10, kT0)), 0U);
  EXPECT_EQ(fifo.Push(At(11, kT0)), 1U);
  EXPECT_EQ(fifo.Push(At(12, kT0)), 2U);
  EXPECT_EQ(fifo.pending(), 3U);
  EXPECT_EQ(fifo.Take(0)->sequence, 10U);
  EXPECT_EQ(fifo.Take(1)->sequence, 11U);
  EXPECT_EQ(fifo.Take(2)->sequence, 12U);
  EXPECT_EQ(fifo.pending(), 0U);
}

TEST(TxStampFifo, AStampThatOvertakesAnotherStillMatchesBoth) {
  TxStampFifo fifo;
  fifo.Push(At(1, kT0));
  fifo.Push(At(2, kT0));
  EXPECT_EQ(fifo.Take(1)->sequence, 2U);
  EXPECT_EQ(fifo.Take(0)->sequence, 1U);
  EXPECT_EQ(fifo.pending(), 0U);
}

TEST(TxStampFifo, DuplicateUnknownAndFutureIdsMatchNothing) {
  TxStampFifo fifo;
  fifo.Push(At(1, kT0));
  fifo.Push(At(2, kT0));
  ASSERT_TRUE(fifo.Take(0));
  EXPECT_FALSE(fifo.Take(0));    // twice
  EXPECT_FALSE(fifo.Take(2));    // not sent yet
  EXPECT_FALSE(fifo.Take(~0U));  // "before" the first send
  EXPECT_EQ(fifo.pending(), 1U);
  EXPECT_EQ(fifo.Take(1)->sequence, 2U);
}

TEST(TxStampFifo, LostStampsExpireAndLaterOnesStillMatch) {
  TxStampFifo fifo;
  fifo.Push(At(1, kT0));  // its stamp never comes
  fifo.Push(At(2, kT0 + 1s));
  fifo.Push(At(3, kT0 + 2s));
  EXPECT_EQ(fifo.Take(2)->sequence, 3U);
  EXPECT_EQ(fifo.Expire(kT0 + 1500ms), 2U);  // 1 and 2 were sent before the cutoff
  EXPECT_EQ(fifo.pending(), 0U);
  EXPECT_FALSE(fifo.Take(0));
  EXPECT_EQ(fifo.Push(At(4, kT0 + 3s)), 3U);  // the kernel's counter went on
  EXPECT_EQ(fifo.Take(3)->sequence, 4U);
}

TEST(TxStampFifo, ExpireCountsOnlyUntakenSends) {
  TxStampFifo fifo;
  fifo.Push(At(1, kT0));
  fifo.Push(At(2, kT0));
  fifo.Push(At(3, kT0));
  ASSERT_TRUE(fifo.Take(1));
  EXPECT_EQ(fifo.Expire(kT0 + 1ns), 2U);
  EXPECT_EQ(fifo.pending(), 0U);
}

TEST(TxStampFifo, IdsWrapAtTwoToTheThirtyTwo) {
  TxStampFifo fifo(0xFFFF'FFFEU);
  EXPECT_EQ(fifo.Push(At(1, kT0)), 0xFFFF'FFFEU);
  EXPECT_EQ(fifo.Push(At(2, kT0)), 0xFFFF'FFFFU);
  EXPECT_EQ(fifo.Push(At(3, kT0)), 0U);
  EXPECT_EQ(fifo.Take(0)->sequence, 3U);
  EXPECT_EQ(fifo.Take(0xFFFF'FFFEU)->sequence, 1U);
  EXPECT_EQ(fifo.Take(0xFFFF'FFFFU)->sequence, 2U);
  EXPECT_EQ(fifo.pending(), 0U);
}

// The ring grows while its front is mid-way round it (taken stamps moved it),
// and every stamp still finds its own send, in any order, as sends go on.
TEST(TxStampFifo, ManyStampsOutstandingAcrossGrowthAllMatch) {
  TxStampFifo fifo;
  std::uint64_t sequence = 100;
  std::uint32_t taken = 0;
  for (int round = 0; round < 50; ++round) {
    const int pushes = 1 + round % 7;  // outstanding stamps rise and fall
    for (int i = 0; i < pushes; ++i) fifo.Push(At(sequence++, kT0));
    // Stamps come back newest first, all but the newest one of this round.
    const std::uint32_t end = fifo.next_id() - 1;
    for (std::uint32_t id = end; id-- > taken;) {
      const auto got = fifo.Take(id);
      ASSERT_TRUE(got) << "id " << id << " in round " << round;
      EXPECT_EQ(got->sequence, 100U + id);
    }
    taken = end;
    EXPECT_EQ(fifo.pending(), 1U);
  }
  EXPECT_EQ(fifo.Take(taken)->sequence, 100U + taken);
  EXPECT_EQ(fifo.pending(), 0U);
}

TEST(TxStampFifo, KeepsTheAppSendTimeForTheSanityCheck) {
  TxStampFifo fifo;
  fifo.Push(PendingSend{7, 1'700'000'000'000'000'000, kT0});
  EXPECT_EQ(fifo.Take(0)->app_send_ns, 1'700'000'000'000'000'000);
}

}  // namespace
}  // namespace hostmesh::agent::udp
