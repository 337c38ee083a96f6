// The ingest protocol without gRPC, on a real store in a temp dir, in virtual
// time: Hello, screening, commit, acks, counters and the sink.
#include "analyzer/ingest/ingest_handler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <future>

#include "proto/wire/packed_results.h"
#include "tests/analyzer/ingest/analyzer_under_test.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"

namespace hostmesh::analyzer::ingest {
namespace {

using analyzer::testing::MakeBatch;
using analyzer::testing::MakeHello;
using analyzer::testing::RecordingSink;
using analyzer::testing::TempDir;
using namespace std::chrono_literals;

class IngestHandlerTest : public ::testing::Test {
 protected:
  IngestHandlerTest() : stats_(registry_) {
    std::string error;
    store::StoreOptions options;
    options.data_dir = dir_.path() / "db";
    store_ = store::Store::Open(clock_, options, error);
    EXPECT_TRUE(store_) << error;
    committer_ = std::make_unique<store::GroupCommitter>(clock_, *store_);
    handler_ = std::make_unique<IngestHandler>(clock_, *store_, *committer_, stats_, &sink_,
                                               IngestOptions{});
  }
  ~IngestHandlerTest() override { committer_->Stop(); }

  // Screens, and commits what passes; waits for the committer's answer.
  v1::UploadAck Ingest(v1::UploadBatch batch) { return Ingest(*handler_, std::move(batch)); }
  static v1::UploadAck Ingest(IngestHandler& handler, v1::UploadBatch batch) {
    IngestHandler::Screened screened =
        handler.Screen(batch, batch.ByteSizeLong(), PeerIdentity::Anyone());
    if (screened.rejected) return *screened.rejected;
    std::promise<v1::UploadAck> answer;
    handler.Commit(nullptr, batch, std::move(screened.agent),
                   [&](std::optional<v1::UploadAck> ack, const std::string& error) {
                     EXPECT_TRUE(ack) << error;
                     answer.set_value(ack.value_or(v1::UploadAck{}));
                   });
    return answer.get_future().get();
  }

  void SayHello(const std::string& agent, std::uint64_t boot) {
    v1::HelloReply reply;
    ASSERT_EQ(handler_->Hello(MakeHello(agent, boot), PeerIdentity::Anyone(), reply).code,
              HelloCode::kOk);
  }

  WallTime Now() const { return clock_.RealtimeNow(); }

  TempDir dir_;
  VirtualClock clock_;
  metrics::Registry registry_;
  IngestStats stats_;
  RecordingSink sink_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<store::GroupCommitter> committer_;
  std::unique_ptr<IngestHandler> handler_;
};

TEST_F(IngestHandlerTest, HelloWithAnUnknownSchemaVersionIsAFailedPrecondition) {
  v1::AgentHello hello = MakeHello("h1", 7);
  hello.set_schema_version(v1::SchemaVersion(2));
  v1::HelloReply reply;
  const HelloOutcome outcome = handler_->Hello(hello, PeerIdentity::Anyone(), reply);
  EXPECT_EQ(outcome.code, HelloCode::kFailedPrecondition);
  EXPECT_NE(outcome.message.find("schema version 2"), std::string::npos) << outcome.message;
  EXPECT_EQ(stats_.hellos_refused.Value(), 1u);
  EXPECT_EQ(stats_.hellos.Value(), 0u);
}

TEST_F(IngestHandlerTest, HelloWithoutAgentIdIsInvalid) {
  v1::HelloReply reply;
  EXPECT_EQ(handler_->Hello(MakeHello("", 7), PeerIdentity::Anyone(), reply).code,
            HelloCode::kInvalidArgument);
}

TEST_F(IngestHandlerTest, HelloReportsTheLastDurableBatchOfThatBoot) {
  SayHello("h1", 7);
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    ASSERT_EQ(Ingest(MakeBatch("h1", 7, seq, 10, Now())).status(), v1::UploadAck::STATUS_ACCEPTED);
  }
  v1::HelloReply reply;
  ASSERT_EQ(handler_->Hello(MakeHello("h1", 7), PeerIdentity::Anyone(), reply).code,
            HelloCode::kOk);
  EXPECT_EQ(reply.last_durable_batch_seq(), 3u);
  EXPECT_EQ(reply.schema_version(), v1::SCHEMA_VERSION_1);
  ASSERT_EQ(handler_->Hello(MakeHello("h1", 8), PeerIdentity::Anyone(), reply).code,
            HelloCode::kOk);
  EXPECT_EQ(reply.last_durable_batch_seq(), 0u) << "a new boot starts from nothing";
}

TEST_F(IngestHandlerTest, AcceptedThenDuplicateCountsAndFeedsTheSinkOnce) {
  SayHello("h1", 7);
  const v1::UploadBatch batch = MakeBatch("h1", 7, 1, 100, Now());
  EXPECT_EQ(Ingest(batch).status(), v1::UploadAck::STATUS_ACCEPTED);
  const v1::UploadAck again = Ingest(batch);
  EXPECT_EQ(again.status(), v1::UploadAck::STATUS_DUPLICATE);
  EXPECT_EQ(again.batch_seq(), 1u);
  EXPECT_EQ(stats_.batches_accepted.Value(), 1u);
  EXPECT_EQ(stats_.results_accepted.Value(), 100u);
  EXPECT_EQ(stats_.batches_duplicate.Value(), 1u);
  EXPECT_EQ(stats_.results_duplicate.Value(), 100u);
  EXPECT_GT(stats_.bytes.Value(), 2 * 100 * 10u);
  EXPECT_EQ(sink_.seqs(), std::vector<std::uint64_t>{1});
  EXPECT_EQ(store_->CountResultsByAgent().at("h1"), 100u);
}

// Every stored result of h1, serialized, in store order.
std::vector<std::string> StoredResults(store::Store& store, WallTime now) {
  std::vector<std::string> out;
  EXPECT_TRUE(store
                  .ScanResults(now - 1h, now + 1h,
                               [&](const store::StoredResult& r) {
                                 if (r.agent_id == "h1")
                                   out.push_back(r.result->SerializeAsString());
                                 return true;
                               })
                  .ok());
  return out;
}

TEST_F(IngestHandlerTest, PackedResultsAreStoredAsTheResultsTheyHold) {
  v1::HelloReply reply;
  ASSERT_EQ(handler_->Hello(MakeHello("h1", 7), PeerIdentity::Anyone(), reply).code,
            HelloCode::kOk);
  EXPECT_EQ(reply.packed_results_format(), wire::kPackedResultsFormat)
      << "agents pack results only when told";
  const v1::UploadBatch rows = MakeBatch("h1", 7, 1, 50, Now());
  v1::UploadBatch packed = rows;
  packed.clear_results();
  std::int64_t previous = 0;
  wire::AppendRowsToPacked(rows.results(), *packed.mutable_packed_results(), previous);
  EXPECT_EQ(Ingest(packed).status(), v1::UploadAck::STATUS_ACCEPTED);
  EXPECT_EQ(stats_.results_accepted.Value(), 50u);
  ASSERT_EQ(sink_.seqs(), std::vector<std::uint64_t>{1});
  std::vector<std::string> expected;
  for (const v1::ProbeResult& r : rows.results()) expected.push_back(r.SerializeAsString());
  std::vector<std::string> stored = StoredResults(*store_, Now());
  std::sort(expected.begin(), expected.end());
  std::sort(stored.begin(), stored.end());
  EXPECT_EQ(stored, expected);
  // Resent as rows (an agent rolled back): the same batch, a duplicate.
  EXPECT_EQ(Ingest(rows).status(), v1::UploadAck::STATUS_DUPLICATE);
}

TEST_F(IngestHandlerTest, MalformedPackedResultsAreRejectedNamingTheRecord) {
  SayHello("h1", 7);
  const v1::UploadBatch rows = MakeBatch("h1", 7, 1, 5, Now());
  v1::UploadBatch packed = rows;
  packed.clear_results();
  std::int64_t previous = 0;
  wire::AppendRowsToPacked(rows.results(), *packed.mutable_packed_results(), previous);
  packed.mutable_packed_results()->mutable_records()->pop_back();
  const v1::UploadAck ack = Ingest(packed);
  EXPECT_EQ(ack.status(), v1::UploadAck::STATUS_REJECTED);
  EXPECT_EQ(ack.error(),
            "bad_result: packed_results: record 4: timestamp_error ends inside the record")
      << ack.error();
  EXPECT_EQ(stats_.Rejected(RejectReason::kBadResult).Value(), 1u);
  // A packed result is validated like any other: here a NIC the Hello never
  // named.
  v1::UploadBatch unknown_nic = rows;
  unknown_nic.mutable_results(2)->set_src_nic(99);
  v1::UploadBatch repacked = rows;
  repacked.clear_results();
  previous = 0;
  wire::AppendRowsToPacked(unknown_nic.results(), *repacked.mutable_packed_results(), previous);
  const v1::UploadAck unknown = Ingest(repacked);
  EXPECT_EQ(unknown.status(), v1::UploadAck::STATUS_REJECTED);
  EXPECT_EQ(stats_.Rejected(RejectReason::kUnknownNic).Value(), 1u) << unknown.error();
  EXPECT_TRUE(sink_.seqs().empty());
}

TEST_F(IngestHandlerTest, NicTelemetryIsStoredWithItsBatchAndCounted) {
  SayHello("h1", 7);
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 10, Now());
  v1::NicTelemetry* t = batch.add_telemetry();
  t->set_nic(2);
  t->set_start_ns((Now() - 10s).time_since_epoch().count());
  t->set_end_ns(Now().time_since_epoch().count());
  EXPECT_EQ(Ingest(batch).status(), v1::UploadAck::STATUS_ACCEPTED);
  EXPECT_EQ(Ingest(batch).status(), v1::UploadAck::STATUS_DUPLICATE);
  EXPECT_EQ(stats_.telemetry_accepted.Value(), 1u);
  int stored = 0;
  store_->ScanTelemetry(Now() - 1h, Now() + 1h, [&](const store::StoredTelemetry& s) {
    EXPECT_EQ(s.telemetry->nic(), 2u);
    ++stored;
    return true;
  });
  EXPECT_EQ(stored, 1);
}

TEST_F(IngestHandlerTest, ABatchOfAnAgentThatNeverSaidHelloIsRejectedAndCounted) {
  const v1::UploadAck ack = Ingest(MakeBatch("stranger", 1, 1, 10, Now()));
  EXPECT_EQ(ack.status(), v1::UploadAck::STATUS_REJECTED);
  EXPECT_EQ(ack.error(), "unknown_agent: agent 'stranger' boot 1 has not said Hello");
  EXPECT_EQ(stats_.Rejected(RejectReason::kUnknownAgent).Value(), 1u);
  EXPECT_TRUE(sink_.seqs().empty());
}

TEST_F(IngestHandlerTest, AHelloOfAnotherBootDoesNotVouchForThisOne) {
  SayHello("h1", 7);
  const v1::UploadAck ack = Ingest(MakeBatch("h1", 8, 1, 10, Now()));
  EXPECT_EQ(ack.status(), v1::UploadAck::STATUS_REJECTED);
  EXPECT_NE(ack.error().find("boot 8 has not said Hello"), std::string::npos) << ack.error();
}

TEST_F(IngestHandlerTest, AHelloBeforeARestartIsStillKnown) {
  SayHello("h1", 7);
  // A second handler over the same store: the analyzer restarted.
  IngestHandler restarted(clock_, *store_, *committer_, stats_, nullptr, IngestOptions{});
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 10, Now());
  EXPECT_TRUE(restarted.Screen(batch, batch.ByteSizeLong(), PeerIdentity::Anyone()).ok());
}

// The analysis takes a batch's host name and NICs from the Hello that ingest
// checked it against, so its committer thread never reads the store for one:
// also when that Hello came before a restart and is known from the store.
TEST_F(IngestHandlerTest, TheSinkGetsEachBatchWithTheHelloItWasCheckedAgainst) {
  SayHello("h1", 7);
  SayHello("h2", 3);
  ASSERT_EQ(Ingest(MakeBatch("h1", 7, 1, 10, Now())).status(), v1::UploadAck::STATUS_ACCEPTED);
  IngestHandler restarted(clock_, *store_, *committer_, stats_, &sink_, IngestOptions{});
  ASSERT_EQ(Ingest(restarted, MakeBatch("h2", 3, 1, 10, Now())).status(),
            v1::UploadAck::STATUS_ACCEPTED);
  EXPECT_EQ(sink_.hellos(), (std::vector<std::string>{"h1/7", "h2/3"}));
}

// Hellos kept in memory are bounded in bytes: a flood of made-up agent ids
// (grpc.insecure lets anyone say Hello as anyone) pushes others out, counted,
// and an agent pushed out is read back from the store at its next batch.
TEST_F(IngestHandlerTest, HellosInMemoryStayWithinTheirBoundAndADroppedOneIsReadBack) {
  IngestOptions options;
  options.max_hello_memory_bytes = 16 << 10;  // a few dozen Hellos
  IngestHandler bounded(clock_, *store_, *committer_, stats_, &sink_, options);
  v1::HelloReply reply;
  ASSERT_EQ(bounded.Hello(MakeHello("honest", 7), PeerIdentity::Anyone(), reply).code,
            HelloCode::kOk);
  for (int i = 0; i < 500; ++i) {
    ASSERT_EQ(
        bounded.Hello(MakeHello("made-up-" + std::to_string(i), 1), PeerIdentity::Anyone(), reply)
            .code,
        HelloCode::kOk);
  }
  EXPECT_GE(stats_.hellos_dropped.Value(), 400.0) << "most of 501 Hellos cannot fit in 16 KiB";
  EXPECT_LE(bounded.agents_held_bytes(), std::size_t{16} << 10);
  EXPECT_EQ(Ingest(bounded, MakeBatch("honest", 7, 1, 10, Now())).status(),
            v1::UploadAck::STATUS_ACCEPTED);
  EXPECT_EQ(sink_.hellos().back(), "honest/7") << "its Hello, read back from the store";
}

TEST_F(IngestHandlerTest, RejectionsAreCountedByReasonAndGoodBatchesStillPass) {
  SayHello("h1", 7);
  v1::UploadBatch future = MakeBatch("h1", 7, 1, 10, Now());
  future.mutable_results(2)->set_send_time_ns((Now() + 1h).time_since_epoch().count());
  v1::UploadBatch bad_nic = MakeBatch("h1", 7, 2, 10, Now());
  bad_nic.mutable_results(0)->set_dst_nic(42);
  EXPECT_EQ(Ingest(future).status(), v1::UploadAck::STATUS_REJECTED);
  EXPECT_EQ(Ingest(bad_nic).status(), v1::UploadAck::STATUS_REJECTED);
  EXPECT_EQ(Ingest(MakeBatch("h1", 7, 3, 10, Now())).status(), v1::UploadAck::STATUS_ACCEPTED);
  EXPECT_EQ(stats_.Rejected(RejectReason::kFutureTimestamp).Value(), 1u);
  EXPECT_EQ(stats_.Rejected(RejectReason::kUnknownNic).Value(), 1u);
  EXPECT_EQ(stats_.Rejected(RejectReason::kTooLarge).Value(), 0u);
  EXPECT_EQ(store_->CountResultsByAgent().at("h1"), 10u) << "nothing of the rejected batches";
  // Every reason is exported, also those never seen.
  for (const prometheus::MetricFamily& family : registry_.Collect()) {
    if (family.name == "hostmesh_ingest_batches_rejected_total") {
      EXPECT_EQ(family.metric.size(), kRejectReasonCount);
    }
  }
}

// An honest agent's software stamps may read receive before send (soft-RoCE
// under QEMU did): the batch is stored whole, that pair cleared and counted.
TEST_F(IngestHandlerTest, AStampPairReadingReceiveBeforeSendIsClearedNotRejected) {
  SayHello("h1", 7);
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 10, Now());
  v1::ProbeResult& r = *batch.mutable_results(4);
  r.set_nic_recv_ns(r.nic_send_ns() - 4'000'000);
  const std::uint64_t sequence = r.sequence();
  const std::uint32_t src_port = r.src_port();
  EXPECT_EQ(Ingest(batch).status(), v1::UploadAck::STATUS_ACCEPTED);
  EXPECT_EQ(stats_.stamps_cleared.Value(), 1.0);
  int seen = 0, cleared = 0;
  ASSERT_TRUE(store_
                  ->ScanResults(Now() - 1h, Now() + 1h,
                                [&](const store::StoredResult& stored) {
                                  const v1::ProbeResult& got = *stored.result;
                                  ++seen;
                                  if (got.sequence() == sequence && got.src_port() == src_port) {
                                    cleared += got.nic_send_ns() == 0 && got.nic_recv_ns() == 0 &&
                                               got.app_send_ns() != 0;
                                  }
                                  return true;
                                })
                  .ok());
  EXPECT_EQ(seen, 10);
  EXPECT_EQ(cleared, 1);
}

}  // namespace
}  // namespace hostmesh::analyzer::ingest
