#include "agent/upload/spool.h"

#include <gtest/gtest.h>

namespace hostmesh::agent::upload {
namespace {

SharedBatch Batch(std::uint64_t seq, int results = 1) {
  auto batch = std::make_shared<v1::UploadBatch>();
  batch->set_agent_id("h003");
  batch->set_boot_id(7);
  batch->set_batch_seq(seq);
  // Same-sized results whatever the seq, so budgets can be counted in batches.
  for (int i = 0; i < results; ++i)
    batch->add_results()->set_sequence(1000 + static_cast<std::uint64_t>(i));
  return batch;
}

v1::UploadAck Ack(std::uint64_t seq, v1::UploadAck::Status status) {
  v1::UploadAck ack;
  ack.set_batch_seq(seq);
  ack.set_status(status);
  return ack;
}

std::vector<std::uint64_t> SendAll(Spool& spool) {
  std::vector<std::uint64_t> seqs;
  while (const SharedBatch batch = spool.TakeNextToSend(MonoTime{})) {
    seqs.push_back(batch->batch_seq());
  }
  return seqs;
}

constexpr std::uint64_t kBig = 1 << 20;

TEST(upload_spool, SendsInOrderAndForgetsAcknowledged) {
  Spool spool(kBig);
  for (std::uint64_t seq = 1; seq <= 3; ++seq) spool.Push(Batch(seq));
  EXPECT_EQ(spool.queue_depth(), 3u);
  EXPECT_EQ(SendAll(spool), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(spool.Apply(Ack(2, v1::UploadAck::STATUS_ACCEPTED)), AckOutcome::kAcknowledged);
  EXPECT_EQ(spool.queue_depth(), 2u);
  EXPECT_EQ(spool.counters().batches_sent, 3u);
  EXPECT_EQ(spool.counters().batches_acknowledged, 1u);
}

TEST(upload_spool, AckIsIdempotent) {
  Spool spool(kBig);
  spool.Push(Batch(1));
  const std::uint64_t bytes = spool.bytes_buffered();
  EXPECT_GT(bytes, 0u);
  SendAll(spool);
  EXPECT_EQ(spool.Apply(Ack(1, v1::UploadAck::STATUS_ACCEPTED)), AckOutcome::kAcknowledged);
  EXPECT_EQ(spool.Apply(Ack(1, v1::UploadAck::STATUS_ACCEPTED)), AckOutcome::kIgnored);
  EXPECT_EQ(spool.Apply(Ack(1, v1::UploadAck::STATUS_DUPLICATE)), AckOutcome::kIgnored);
  EXPECT_EQ(spool.counters().batches_acknowledged, 1u);
  EXPECT_EQ(spool.counters().acks_ignored, 2u);
  EXPECT_EQ(spool.bytes_buffered(), 0u);
  EXPECT_TRUE(spool.empty());
}

TEST(upload_spool, DuplicateCountsAsAcknowledged) {
  Spool spool(kBig);
  spool.Push(Batch(1));
  SendAll(spool);
  EXPECT_EQ(spool.Apply(Ack(1, v1::UploadAck::STATUS_DUPLICATE)), AckOutcome::kDuplicate);
  EXPECT_TRUE(spool.empty());
  EXPECT_EQ(spool.counters().batches_acknowledged, 1u);
  EXPECT_EQ(spool.counters().batches_duplicate, 1u);
}

TEST(upload_spool, RejectedIsDroppedNotResent) {
  Spool spool(kBig);
  spool.Push(Batch(1));
  spool.Push(Batch(2));
  SendAll(spool);
  EXPECT_EQ(spool.Apply(Ack(1, v1::UploadAck::STATUS_REJECTED)), AckOutcome::kRejected);
  EXPECT_EQ(spool.counters().batches_rejected, 1u);
  EXPECT_EQ(spool.counters().batches_acknowledged, 0u);
  spool.Rewind(0);
  EXPECT_EQ(SendAll(spool), (std::vector<std::uint64_t>{2}));
}

TEST(upload_spool, UnspecifiedStatusKeepsTheBatch) {
  Spool spool(kBig);
  spool.Push(Batch(1));
  SendAll(spool);
  EXPECT_EQ(spool.Apply(Ack(1, v1::UploadAck::STATUS_UNSPECIFIED)), AckOutcome::kIgnored);
  EXPECT_EQ(spool.queue_depth(), 1u);
}

// DESIGN 7: an agent believes an ack only for what it sent. A forged batch
// with a real agent's id and seq 2^64-1 once made the analyzer report that
// seq as durable, and the agent dropped its whole spool.
TEST(upload_spool, AcksAndDurableClaimsBeyondWhatWasSentAreProtocolErrors) {
  Spool spool(kBig);
  for (std::uint64_t seq = 1; seq <= 4; ++seq) spool.Push(Batch(seq));
  ASSERT_NE(spool.TakeNextToSend(MonoTime{}), nullptr);  // batch 1
  ASSERT_NE(spool.TakeNextToSend(MonoTime{}), nullptr);  // batch 2
  EXPECT_EQ(spool.highest_written(), 2u);
  EXPECT_EQ(spool.Apply(Ack(3, v1::UploadAck::STATUS_ACCEPTED)), AckOutcome::kProtocolError);
  EXPECT_EQ(spool.Apply(Ack(UINT64_MAX, v1::UploadAck::STATUS_ACCEPTED)),
            AckOutcome::kProtocolError);
  EXPECT_EQ(spool.queue_depth(), 4u);
  EXPECT_FALSE(spool.Rewind(UINT64_MAX));  // a reconnect's HelloReply claims too much
  EXPECT_EQ(spool.counters().protocol_errors, 3u);
  EXPECT_EQ(spool.counters().batches_already_durable, 0u);
  EXPECT_EQ(SendAll(spool), (std::vector<std::uint64_t>{1, 2, 3, 4}));  // nothing lost
  EXPECT_TRUE(spool.Rewind(4));                                         // a true claim is believed
  EXPECT_TRUE(spool.empty());
}

TEST(upload_spool, RewindResendsEveryUnackedBatchInOrderOnce) {
  Spool spool(kBig);
  for (std::uint64_t seq = 1; seq <= 5; ++seq) spool.Push(Batch(seq));
  EXPECT_EQ(SendAll(spool), (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  spool.Apply(Ack(1, v1::UploadAck::STATUS_ACCEPTED));
  spool.Apply(Ack(3, v1::UploadAck::STATUS_ACCEPTED));
  spool.Rewind(0);  // reconnected: the analyzer has nothing new to tell
  spool.Push(Batch(6));
  EXPECT_EQ(SendAll(spool), (std::vector<std::uint64_t>{2, 4, 5, 6}));
  EXPECT_EQ(spool.counters().batches_resent, 3u);
  EXPECT_EQ(spool.counters().batches_sent, 9u);
}

TEST(upload_spool, HelloLastDurableSkipsWhatTheAnalyzerHas) {
  Spool spool(kBig);
  for (std::uint64_t seq = 1; seq <= 4; ++seq) spool.Push(Batch(seq));
  SendAll(spool);
  spool.Rewind(2);
  EXPECT_EQ(spool.counters().batches_already_durable, 2u);
  EXPECT_EQ(spool.counters().batches_acknowledged, 2u);
  EXPECT_EQ(SendAll(spool), (std::vector<std::uint64_t>{3, 4}));
}

TEST(upload_spool, OldestUnackedWriteIsTracked) {
  Spool spool(kBig);
  spool.Push(Batch(1));
  spool.Push(Batch(2));
  EXPECT_FALSE(spool.OldestUnackedWriteAt()) << "nothing written yet";
  const MonoTime t1 = MonoTime{} + std::chrono::seconds{1};
  const MonoTime t2 = MonoTime{} + std::chrono::seconds{2};
  spool.TakeNextToSend(t1);
  spool.TakeNextToSend(t2);
  EXPECT_EQ(spool.OldestUnackedWriteAt(), t1);
  spool.Apply(Ack(1, v1::UploadAck::STATUS_ACCEPTED));
  EXPECT_EQ(spool.OldestUnackedWriteAt(), t2);
  spool.Rewind(0);
  EXPECT_FALSE(spool.OldestUnackedWriteAt()) << "a new connection has written nothing";
}

TEST(upload_spool, BudgetCountsTheMemoryOfArenaBatchesNotTheirWireSize) {
  // An agent buffering through an outage: its batches live in arenas, which
  // take about twice the wire size; the budget bounds the memory.
  auto arena = std::make_shared<google::protobuf::Arena>();
  auto* message = google::protobuf::Arena::CreateMessage<v1::UploadBatch>(arena.get());
  message->set_batch_seq(1);
  for (int i = 0; i < 1000; ++i) {
    v1::ProbeResult* r = message->add_results();
    r->set_sequence(static_cast<std::uint64_t>(i));
    r->set_src_port(50000);
  }
  const SharedBatch batch(arena, message);
  const std::uint64_t wire = batch->ByteSizeLong();
  EXPECT_EQ(Spool::MemoryBytes(*batch), arena->SpaceAllocated());
  EXPECT_GT(Spool::MemoryBytes(*batch), wire);

  Spool spool(arena->SpaceAllocated() - 1);  // room for the wire size, not the memory
  spool.Push(batch);
  EXPECT_TRUE(spool.empty());
  EXPECT_EQ(spool.counters().batches_dropped, 1u);
  EXPECT_EQ(spool.counters().bytes_dropped, arena->SpaceAllocated());
}

TEST(upload_spool, APackedBatchCountsItsRecordsBesideItsArena) {
  // The packed records' string lives on the heap, outside the arena's blocks.
  auto arena = std::make_shared<google::protobuf::Arena>();
  auto* message = google::protobuf::Arena::CreateMessage<v1::UploadBatch>(arena.get());
  message->set_batch_seq(1);
  std::string& records = *message->mutable_packed_results()->mutable_records();
  records.assign(100'000, '\x01');
  const SharedBatch batch(arena, message);
  EXPECT_EQ(Spool::MemoryBytes(*batch), arena->SpaceAllocated() + records.capacity());
  EXPECT_GE(Spool::MemoryBytes(*batch), 100'000U);
}

TEST(upload_spool, OverBudgetDropsOldestFirstAndCounts) {
  const std::uint64_t one = Batch(1, 10)->ByteSizeLong();
  Spool spool(3 * one + one / 2);  // room for three batches
  for (std::uint64_t seq = 1; seq <= 3; ++seq) spool.Push(Batch(seq, 10));
  EXPECT_EQ(spool.counters().batches_dropped, 0u);
  spool.Push(Batch(4, 10));
  spool.Push(Batch(5, 10));
  EXPECT_EQ(spool.queue_depth(), 3u);
  EXPECT_LE(spool.bytes_buffered(), spool.budget_bytes());
  EXPECT_EQ(spool.counters().batches_dropped, 2u);
  EXPECT_EQ(spool.counters().results_dropped, 20u);
  EXPECT_EQ(spool.counters().bytes_dropped, 2 * one);
  EXPECT_EQ(SendAll(spool), (std::vector<std::uint64_t>{3, 4, 5}));
  // An ack for a dropped batch is harmless.
  EXPECT_EQ(spool.Apply(Ack(1, v1::UploadAck::STATUS_ACCEPTED)), AckOutcome::kIgnored);
}

TEST(upload_spool, BatchLargerThanTheBudgetIsDroppedToo) {
  Spool spool(10);
  spool.Push(Batch(1, 50));
  EXPECT_TRUE(spool.empty());
  EXPECT_EQ(spool.bytes_buffered(), 0u);
  EXPECT_EQ(spool.counters().batches_dropped, 1u);
  EXPECT_EQ(spool.counters().results_dropped, 50u);
}

}  // namespace
}  // namespace hostmesh::agent::upload
