// The uploader's state machine in virtual time against a fake channel: no
// threads, no sockets, no sleeping.
#include "agent/upload/upload_engine.h"

#include <gtest/gtest.h>

#include "agent/upload/deferred_channel.h"
#include "agent/upload/wire_messages.h"
#include "tests/agent/upload/fake_upload_channel.h"

namespace hostmesh::agent::upload {
namespace {

using namespace std::chrono_literals;
using testing::FakeUploadChannel;

constexpr double kAlmostOne = 0.999999;

UploadEngineOptions Options() {
  UploadEngineOptions options;
  options.upload.batch_max_results = 2;
  options.upload.batch_max_age = 1s;
  options.upload.buffer_budget = config::MiB(1);
  options.upload.backoff_initial = 100ms;
  options.upload.backoff_max = 1s;
  options.ack_timeout = 5s;
  options.healthy_after = 10s;
  // Full jitter with draws next to 1: each delay is its ceiling, so tests can
  // name the exact schedule 100, 200, 400, 800, 1000 ms.
  options.jitter = Jitter::kFull;
  return options;
}

v1::AgentHello Hello() {
  v1::AgentHello hello;
  hello.set_schema_version(v1::SCHEMA_VERSION_1);
  hello.set_agent_id("h003");
  hello.set_boot_id(77);
  return hello;
}

class upload_engine : public ::testing::Test {
 protected:
  explicit upload_engine(UploadEngineOptions options = Options())
      : engine_(clock_, options, Hello(), channel_, [] { return kAlmostOne; }) {
    channel_.set_sink([this](ChannelEvent event) { engine_.Handle(event); });
  }

  // Appends enough results to close `batches` batches.
  void AppendBatches(int batches) {
    for (int i = 0; i < 2 * batches; ++i) {
      v1::ProbeResult result;
      result.set_sequence(next_sequence_++);
      engine_.Append(result);
    }
  }

  void Connect(std::uint64_t last_durable_seq = 0, bool reads_packed = true) {
    engine_.Poll();
    ASSERT_EQ(engine_.state(), ConnectionState::kConnecting);
    channel_.AcceptOpen(last_durable_seq, reads_packed);
    ASSERT_EQ(engine_.state(), ConnectionState::kStreaming);
  }

  // Lets every write the engine starts complete, until it has nothing to write.
  void Pump() {
    for (;;) {
      engine_.Poll();
      if (!channel_.write_pending) return;
      channel_.CompleteWrite();
    }
  }

  // Waits out the backoff in virtual time.
  void AdvanceToRetry() { clock_.AdvanceTo(engine_.retry_at()); }

  // A connection that got an ack (so was healthy), then lost.
  void AckedConnectionLost() {
    Connect();
    AppendBatches(1);
    Pump();
    channel_.Ack(1);
    channel_.Disconnect();
  }

  VirtualClock clock_;
  FakeUploadChannel channel_;
  UploadEngine engine_;
  std::uint64_t next_sequence_ = 1;
};

TEST_F(upload_engine, FirstPollConnectsWithTheCallersHello) {
  engine_.Poll();
  EXPECT_EQ(channel_.opens, (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(channel_.last_hello.agent_id(), "h003");
  EXPECT_EQ(channel_.last_hello.boot_id(), 77u);
  channel_.AcceptOpen();
  EXPECT_EQ(engine_.Counters().connects, 1u);
}

TEST_F(upload_engine, AppendOnlyBuffersAndNeverTouchesTheChannel) {
  EXPECT_TRUE(engine_.Append(v1::ProbeResult{})) << "a new batch starts its age timer";
  EXPECT_TRUE(engine_.Append(v1::ProbeResult{})) << "the batch closed";
  EXPECT_TRUE(engine_.Append(v1::ProbeResult{})) << "the next batch starts its timer";
  AppendBatches(49);
  EXPECT_TRUE(channel_.opens.empty());
  EXPECT_TRUE(channel_.writes.empty());
  const UploadCounters counters = engine_.Counters();
  EXPECT_EQ(counters.queue_depth, 50u);
  EXPECT_EQ(counters.batches_closed, 50u);
  EXPECT_EQ(counters.open_items, 1u);
  EXPECT_GT(counters.bytes_buffered, 0u);
}

TEST_F(upload_engine, WritesOneBatchAtATimeInOrder) {
  Connect();
  AppendBatches(3);
  engine_.Poll();
  engine_.Poll();
  EXPECT_EQ(channel_.WrittenSeqs(), (std::vector<std::uint64_t>{1})) << "waits for WriteDone";
  channel_.CompleteWrite();
  Pump();
  EXPECT_EQ(channel_.WrittenSeqs(), (std::vector<std::uint64_t>{1, 2, 3}));
  const v1::UploadBatch& first = *channel_.writes.front().batch;
  EXPECT_EQ(first.agent_id(), "h003");
  EXPECT_EQ(first.boot_id(), 77u);
  EXPECT_EQ(first.results(0).sequence(), 1u);
  EXPECT_EQ(engine_.Counters().batches_sent, 3u);
}

TEST_F(upload_engine, AFlightRecordRidesInABatchOfItsOwn) {
  Connect();
  engine_.Append(v1::ProbeResult{});  // an open batch, not yet due
  v1::FlightRecord record;
  record.set_incident_id(9);
  EXPECT_TRUE(engine_.Append(record));
  engine_.Append(v1::ProbeResult{});
  Pump();
  ASSERT_EQ(channel_.WrittenSeqs(), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(channel_.writes[0].batch->results_size(), 1);
  EXPECT_EQ(channel_.writes[0].batch->flight_records_size(), 0);
  // The analyzer may refuse a record without losing a result with it.
  EXPECT_EQ(channel_.writes[1].batch->results_size(), 0);
  EXPECT_EQ(channel_.writes[1].batch->flight_records_size(), 1);
  EXPECT_EQ(engine_.Counters().open_items, 1u) << "the next result opens the next batch";
}

// Four agent results: two batches.
std::vector<ProbeResult> AgentResults() {
  std::vector<ProbeResult> results(4);
  for (std::size_t i = 0; i < results.size(); ++i) {
    results[i].sequence = i + 1;
    results[i].send_time_ns = 1'000'000 + static_cast<std::int64_t>(i);
    results[i].nic_recv_ns = 1'020'000;
  }
  return results;
}

TEST_F(upload_engine, ResultsGoPackedToAnAnalyzerThatReadsThem) {
  Connect();
  const std::vector<ProbeResult> results = AgentResults();
  EXPECT_TRUE(engine_.AppendResults(results));
  Pump();
  ASSERT_EQ(channel_.WrittenSeqs(), (std::vector<std::uint64_t>{1, 2}));
  for (const auto& write : channel_.writes) {
    EXPECT_EQ(write.batch->results_size(), 0);
    EXPECT_EQ(write.batch->packed_results().count(), 2U);
  }
  EXPECT_EQ(engine_.Counters().batches_sent_as_rows, 0U);
}

TEST_F(upload_engine, ResultsGoAsMessagesToAnAnalyzerThatPredatesPacking) {
  const std::vector<ProbeResult> results = AgentResults();
  engine_.AppendResults(results);  // packed before any analyzer answered
  Connect(0, false);
  Pump();
  ASSERT_EQ(channel_.WrittenSeqs(), (std::vector<std::uint64_t>{1, 2}));
  for (std::size_t b = 0; b < 2; ++b) {
    const v1::UploadBatch& batch = *channel_.writes[b].batch;
    EXPECT_FALSE(batch.has_packed_results());
    ASSERT_EQ(batch.results_size(), 2);
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(batch.results(i).SerializeAsString(),
                ToProto(results[2 * b + static_cast<std::size_t>(i)]).SerializeAsString());
    }
  }
  EXPECT_EQ(engine_.Counters().batches_sent_as_rows, 2U);
  // The spool keeps the batches as built: a newer analyzer gets them packed.
  channel_.Disconnect();
  AdvanceToRetry();
  Connect(0, true);
  Pump();
  EXPECT_EQ(channel_.WrittenSeqs(2), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(channel_.writes.back().batch->packed_results().count(), 2U);
  EXPECT_EQ(engine_.Counters().batches_sent_as_rows, 2U);
}

TEST_F(upload_engine, AgedBatchIsClosedAndSentByPoll) {
  Connect();
  engine_.Append(v1::ProbeResult{});
  const MonoTime due = clock_.MonotonicNow() + 1s;
  EXPECT_EQ(engine_.Poll(), due) << "the driver is told to come back when the batch is due";
  EXPECT_TRUE(channel_.writes.empty());
  clock_.AdvanceTo(due);
  engine_.Poll();
  EXPECT_EQ(channel_.WrittenSeqs(), (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(channel_.writes[0].batch->results_size(), 1);
}

TEST_F(upload_engine, AcksDuplicatesAndRejections) {
  Connect();
  AppendBatches(3);
  Pump();
  channel_.Ack(1, v1::UploadAck::STATUS_ACCEPTED);
  channel_.Ack(2, v1::UploadAck::STATUS_DUPLICATE);
  channel_.Ack(3, v1::UploadAck::STATUS_REJECTED);
  channel_.Ack(3, v1::UploadAck::STATUS_ACCEPTED);  // too late, already settled
  const UploadCounters counters = engine_.Counters();
  EXPECT_EQ(counters.batches_acknowledged, 2u);
  EXPECT_EQ(counters.batches_duplicate, 1u);
  EXPECT_EQ(counters.batches_rejected, 1u);
  EXPECT_EQ(counters.acks_ignored, 1u);
  EXPECT_EQ(counters.queue_depth, 0u);
  EXPECT_TRUE(engine_.Settled());
}

TEST_F(upload_engine, ResendsEveryUnackedBatchInOrderAfterADisconnect) {
  Connect();
  AppendBatches(5);
  Pump();
  channel_.Ack(1);
  channel_.Ack(3);
  channel_.Disconnect();
  EXPECT_EQ(engine_.state(), ConnectionState::kWaiting);
  EXPECT_EQ(channel_.closes, (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(engine_.Counters().disconnects, 1u);

  AppendBatches(1);  // probing goes on while disconnected
  engine_.Poll();
  EXPECT_EQ(channel_.opens.size(), 1u) << "no reconnect before the backoff";
  AdvanceToRetry();
  Connect();
  Pump();
  EXPECT_EQ(channel_.WrittenSeqs(2), (std::vector<std::uint64_t>{2, 4, 5, 6}));
  EXPECT_EQ(engine_.Counters().batches_resent, 3u);

  for (std::uint64_t seq : {2, 4, 5, 6}) channel_.Ack(seq);
  channel_.Disconnect();
  AdvanceToRetry();
  Connect();
  Pump();
  EXPECT_TRUE(channel_.WrittenSeqs(3).empty()) << "nothing acknowledged is ever sent again";
  EXPECT_TRUE(engine_.Settled());
}

TEST_F(upload_engine, HelloReplySkipsWhatTheAnalyzerAlreadyHas) {
  Connect();
  AppendBatches(5);
  Pump();
  channel_.Disconnect();  // the acks of 1..4 were lost with the connection
  AdvanceToRetry();
  Connect(/*last_durable_seq=*/4);
  Pump();
  EXPECT_EQ(channel_.WrittenSeqs(2), (std::vector<std::uint64_t>{5}));
  EXPECT_EQ(engine_.Counters().batches_already_durable, 4u);
  EXPECT_EQ(engine_.last_durable_seq(), 4u);
}

TEST_F(upload_engine, FailedWriteReconnectsAndResends) {
  Connect();
  AppendBatches(2);
  engine_.Poll();
  channel_.CompleteWrite(/*ok=*/false);
  EXPECT_EQ(engine_.state(), ConnectionState::kWaiting);
  AdvanceToRetry();
  Connect();
  Pump();
  EXPECT_EQ(channel_.WrittenSeqs(2), (std::vector<std::uint64_t>{1, 2}));
}

TEST_F(upload_engine, ConnectFailuresBackOffExponentiallyUpToTheCap) {
  std::vector<std::chrono::nanoseconds> delays;
  for (int i = 0; i < 6; ++i) {
    engine_.Poll();
    ASSERT_EQ(engine_.state(), ConnectionState::kConnecting);
    channel_.FailOpen();
    delays.push_back(engine_.retry_at() - clock_.MonotonicNow());
    EXPECT_EQ(engine_.Poll(), engine_.retry_at()) << "the driver sleeps until the retry";
    AdvanceToRetry();
  }
  for (std::size_t i = 0; i < delays.size(); ++i) {
    const std::vector<std::chrono::nanoseconds> ceilings = {100ms, 200ms, 400ms, 800ms, 1s, 1s};
    EXPECT_LE(delays[i], ceilings[i]) << i;
    EXPECT_GE(delays[i], ceilings[i] * 0.999) << i;
  }
  EXPECT_EQ(engine_.Counters().connect_failures, 6u);
  EXPECT_EQ(channel_.opens.size(), 6u);
  EXPECT_EQ(engine_.last_error(), "connection refused");
}

// An attempt that ran out of its deadline found the analyzer up and busy (a
// fleet's handshakes queued there): the next attempt is spread over the
// deadline, doubling while they keep timing out, instead of 100 ms later.
TEST_F(upload_engine, AttemptsThatRunOutOfTheirDeadlineSpreadTheNextOverItDoubling) {
  const std::chrono::nanoseconds deadline = Options().upload.hello_timeout;
  std::vector<std::chrono::nanoseconds> delays;
  for (int i = 0; i < 6; ++i) {
    engine_.Poll();
    ASSERT_EQ(engine_.state(), ConnectionState::kConnecting);
    channel_.FailOpen("Hello: DEADLINE_EXCEEDED", /*deadline_exceeded=*/true);
    delays.push_back(engine_.retry_at() - clock_.MonotonicNow());
    AdvanceToRetry();
  }
  const int ceilings[] = {1, 2, 4, 8, 16, 16};  // deadlines
  for (std::size_t i = 0; i < delays.size(); ++i) {
    EXPECT_LE(delays[i], ceilings[i] * deadline) << i;
    EXPECT_GE(delays[i], ceilings[i] * deadline * 0.999) << i;
  }
  // A refusal (the analyzer is down) still retries after the usual backoff.
  engine_.Poll();
  channel_.FailOpen();
  EXPECT_LE(engine_.retry_at() - clock_.MonotonicNow(), 100ms);
  AdvanceToRetry();
  // A healthy connection starts the busy spread from one deadline again.
  AckedConnectionLost();
  AdvanceToRetry();
  engine_.Poll();
  channel_.FailOpen("Hello: DEADLINE_EXCEEDED", /*deadline_exceeded=*/true);
  EXPECT_LE(engine_.retry_at() - clock_.MonotonicNow(), deadline);
  EXPECT_EQ(engine_.Counters().connect_failures, 8u);
}

TEST_F(upload_engine, AnAckMakesTheConnectionHealthyAndResetsTheBackoff) {
  for (int i = 0; i < 4; ++i) {
    engine_.Poll();
    channel_.FailOpen();
    AdvanceToRetry();
  }
  AckedConnectionLost();
  EXPECT_LE(engine_.retry_at() - clock_.MonotonicNow(), 100ms);
}

TEST_F(upload_engine, AConnectionThatStaysUpIsHealthyWithoutAcks) {
  for (int i = 0; i < 4; ++i) {
    engine_.Poll();
    channel_.FailOpen();
    AdvanceToRetry();
  }
  Connect();
  EXPECT_EQ(engine_.Poll(), clock_.MonotonicNow() + 10s);
  clock_.Advance(10s);
  engine_.Poll();
  channel_.Disconnect();
  EXPECT_LE(engine_.retry_at() - clock_.MonotonicNow(), 100ms);
}

TEST_F(upload_engine, AShortLivedConnectionKeepsBackingOff) {
  for (int i = 0; i < 3; ++i) {
    engine_.Poll();
    channel_.FailOpen();
    AdvanceToRetry();
  }
  Connect();
  channel_.Disconnect();  // up and down with no ack: not healthy
  EXPECT_GE(engine_.retry_at() - clock_.MonotonicNow(), 799ms);
}

TEST_F(upload_engine, StalledStreamIsGivenUpAfterTheAckTimeout) {
  Connect();
  AppendBatches(1);
  Pump();
  const MonoTime deadline = clock_.MonotonicNow() + 5s;
  EXPECT_EQ(engine_.Poll(), deadline);
  clock_.AdvanceTo(deadline - 1ms);
  engine_.Poll();
  EXPECT_EQ(engine_.state(), ConnectionState::kStreaming);
  clock_.AdvanceTo(deadline);
  engine_.Poll();
  EXPECT_EQ(engine_.state(), ConnectionState::kWaiting);
  EXPECT_EQ(channel_.closes, (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(engine_.Counters().disconnects, 1u);
  EXPECT_NE(engine_.last_error().find("no acknowledgement"), std::string::npos);
}

TEST_F(upload_engine, SlowButProgressingAcksAreNotAStall) {
  Connect();
  AppendBatches(3);
  Pump();
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    clock_.Advance(4s);
    engine_.Poll();
    ASSERT_EQ(engine_.state(), ConnectionState::kStreaming) << seq;
    channel_.Ack(seq);
  }
}

TEST_F(upload_engine, LateEventsOfAnOldConnectionAreIgnoredButItsAcksCount) {
  Connect();
  AppendBatches(2);
  Pump();
  channel_.Disconnect();
  AdvanceToRetry();
  engine_.Poll();
  ASSERT_EQ(channel_.current, 2u);
  engine_.Handle(ChannelEvent::Closed(1, "late news"));
  engine_.Handle(ChannelEvent::WriteDone(1, false));
  EXPECT_EQ(engine_.state(), ConnectionState::kConnecting);
  v1::UploadAck ack;
  ack.set_batch_seq(1);
  ack.set_status(v1::UploadAck::STATUS_ACCEPTED);
  engine_.Handle(ChannelEvent::Ack(1, ack));
  channel_.AcceptOpen();
  Pump();
  EXPECT_EQ(channel_.WrittenSeqs(2), (std::vector<std::uint64_t>{2}));
}

TEST_F(upload_engine, BudgetDropsOldestWhileTheAnalyzerIsDown) {
  AppendBatches(1);
  const std::uint64_t one = engine_.Counters().bytes_buffered;
  UploadEngineOptions options = Options();
  options.upload.buffer_budget = config::ByteSize{one * 3 + one / 2};
  FakeUploadChannel channel;
  UploadEngine engine(clock_, options, Hello(), channel, [] { return kAlmostOne; });
  channel.set_sink([&](ChannelEvent event) { engine.Handle(event); });
  for (int i = 0; i < 10; ++i) {
    v1::ProbeResult result;
    result.set_sequence(1);  // same size every batch
    engine.Append(result);
    engine.Append(result);
  }
  UploadCounters counters = engine.Counters();
  EXPECT_EQ(counters.queue_depth, 3u);
  EXPECT_EQ(counters.batches_dropped, 7u);
  EXPECT_EQ(counters.results_dropped, 14u);
  EXPECT_EQ(counters.bytes_dropped, 7 * one);
  engine.Poll();
  channel.AcceptOpen();
  for (;;) {
    engine.Poll();
    if (!channel.write_pending) break;
    channel.CompleteWrite();
  }
  EXPECT_EQ(channel.WrittenSeqs(), (std::vector<std::uint64_t>{8, 9, 10})) << "the newest survive";
}

TEST_F(upload_engine, FlushPartialThenStop) {
  Connect();
  engine_.Append(v1::ProbeResult{});
  EXPECT_FALSE(engine_.Settled());
  engine_.FlushPartial();
  Pump();
  EXPECT_EQ(channel_.WrittenSeqs(), (std::vector<std::uint64_t>{1}));
  channel_.Ack(1);
  EXPECT_TRUE(engine_.Settled());
  engine_.Stop();
  EXPECT_EQ(channel_.closes, (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(engine_.state(), ConnectionState::kStopped);
  AppendBatches(1);
  channel_.Disconnect();  // after Stop nothing reconnects or writes
  clock_.Advance(1h);
  engine_.Poll();
  EXPECT_EQ(channel_.opens.size(), 1u);
  EXPECT_EQ(channel_.writes.size(), 1u);
}

TEST(upload_deferred_channel, ReplaysCommandsInOrder) {
  DeferredChannel deferred;
  deferred.Open(1, Hello());
  auto batch = std::make_shared<v1::UploadBatch>();
  batch->set_batch_seq(5);
  deferred.Write(1, batch);
  deferred.Close(1);
  deferred.Open(2, Hello());
  FakeUploadChannel target;
  std::vector<DeferredChannel::Command> commands = deferred.Take();
  EXPECT_TRUE(deferred.Take().empty());
  DeferredChannel::Replay(commands, target);
  EXPECT_EQ(target.calls, (std::vector<std::string>{"open 1", "write 1:5", "close 1", "open 2"}));
  EXPECT_EQ(target.last_hello.agent_id(), "h003");
}

}  // namespace
}  // namespace hostmesh::agent::upload
