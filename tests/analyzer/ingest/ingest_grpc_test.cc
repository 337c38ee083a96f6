// The AgentIngest service over real gRPC on 127.0.0.1 with RocksDB in a temp
// dir: raw stub calls for the protocol, then the agent's own Uploader across
// an analyzer restart. Real time, but no fixed sleeps: waits poll a condition.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <thread>

#include "agent/upload/uploader.h"
#include "hostmesh/v1/ingest.grpc.pb.h"
#include "tests/analyzer/ingest/analyzer_under_test.h"
#include "tests/analyzer/ingest/fast_uploader_options.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"

namespace hostmesh::analyzer::ingest {
namespace {

using analyzer::testing::AnalyzerUnderTest;
using analyzer::testing::Eventually;
using analyzer::testing::MakeBatch;
using analyzer::testing::MakeHello;
using analyzer::testing::TempDir;
using namespace std::chrono_literals;

std::unique_ptr<v1::AgentIngest::Stub> Connect(const std::string& address) {
  return v1::AgentIngest::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

// Writes every batch on one Upload stream, half-closes it and returns the acks;
// the stream must end OK.
std::vector<v1::UploadAck> UploadAll(v1::AgentIngest::Stub& stub,
                                     const std::vector<v1::UploadBatch>& batches) {
  grpc::ClientContext context;
  auto stream = stub.Upload(&context);
  for (const v1::UploadBatch& batch : batches) EXPECT_TRUE(stream->Write(batch));
  EXPECT_TRUE(stream->WritesDone());
  std::vector<v1::UploadAck> acks;
  v1::UploadAck ack;
  while (stream->Read(&ack)) acks.push_back(ack);
  EXPECT_TRUE(stream->Finish().ok());
  return acks;
}

TEST(ingest_grpc, HelloWithAnUnknownSchemaIsFailedPrecondition) {
  TempDir dir;
  SystemClock clock;
  AnalyzerUnderTest analyzer(clock, dir.path() / "db", "127.0.0.1:0");
  ASSERT_TRUE(analyzer.ok());
  auto stub = Connect(analyzer.address());
  v1::AgentHello hello = MakeHello("h1", 7);
  hello.set_schema_version(v1::SchemaVersion(9));
  v1::HelloReply reply;
  grpc::ClientContext context;
  const grpc::Status status = stub->Hello(&context, hello, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(status.error_message().find("schema version 9"), std::string::npos);
}

TEST(ingest_grpc, OneStreamAcksEachBatchInOrderAndABadOneHarmsNoOther) {
  TempDir dir;
  SystemClock clock;
  AnalyzerUnderTest analyzer(clock, dir.path() / "db", "127.0.0.1:0");
  ASSERT_TRUE(analyzer.ok());
  auto stub = Connect(analyzer.address());
  {
    v1::HelloReply reply;
    grpc::ClientContext context;
    ASSERT_TRUE(stub->Hello(&context, MakeHello("h1", 7), &reply).ok());
    EXPECT_EQ(reply.last_durable_batch_seq(), 0u);
  }
  const WallTime now = clock.RealtimeNow();
  v1::UploadBatch bad_nic = MakeBatch("h1", 7, 2, 50, now);
  bad_nic.mutable_results(4)->set_src_nic(77);
  const std::vector<v1::UploadBatch> sent = {
      MakeBatch("h1", 7, 1, 50, now),      bad_nic,
      MakeBatch("h1", 7, 3, 50, now),      MakeBatch("h1", 7, 1, 50, now),  // resent: duplicate
      MakeBatch("h2", 1, 1, 50, now),                                       // never said Hello
      MakeBatch("h1", 7, 4, 50, now + 1h),                                  // from the future
      MakeBatch("h1", 7, 5, 50, now)};
  const std::vector<v1::UploadAck> acks = UploadAll(*stub, sent);

  ASSERT_EQ(acks.size(), sent.size());
  const v1::UploadAck::Status expected[] = {
      v1::UploadAck::STATUS_ACCEPTED, v1::UploadAck::STATUS_REJECTED,
      v1::UploadAck::STATUS_ACCEPTED, v1::UploadAck::STATUS_DUPLICATE,
      v1::UploadAck::STATUS_REJECTED, v1::UploadAck::STATUS_REJECTED,
      v1::UploadAck::STATUS_ACCEPTED};
  for (std::size_t i = 0; i < acks.size(); ++i) {
    EXPECT_EQ(acks[i].batch_seq(), sent[i].batch_seq()) << "ack " << i << " out of order";
    EXPECT_EQ(acks[i].status(), expected[i]) << "ack " << i << ": " << acks[i].error();
  }
  EXPECT_NE(acks[1].error().find("unknown_nic: result 4: src_nic 77"), std::string::npos)
      << acks[1].error();
  EXPECT_NE(acks[4].error().find("unknown_agent"), std::string::npos) << acks[4].error();
  EXPECT_NE(acks[5].error().find("future_timestamp"), std::string::npos) << acks[5].error();

  EXPECT_EQ(analyzer.store().CountResultsByAgent().at("h1"), 150u);
  EXPECT_EQ(analyzer.store().LastDurableBatchSeq("h1", 7), 5u);
  EXPECT_EQ(analyzer.sink().seqs(), (std::vector<std::uint64_t>{1, 3, 5}));
  EXPECT_EQ(analyzer.stats().Rejected(RejectReason::kUnknownNic).Value(), 1u);
  EXPECT_EQ(analyzer.stats().Rejected(RejectReason::kUnknownAgent).Value(), 1u);
  EXPECT_EQ(analyzer.stats().Rejected(RejectReason::kFutureTimestamp).Value(), 1u);
  EXPECT_EQ(analyzer.stats().batches_duplicate.Value(), 1u);
  EXPECT_TRUE(Eventually([&] { return analyzer.stats().streams_open.Value() == 0; }));
}

// A message over the batch size limit is refused from its header alone (its
// items are not parsed): the same REJECTED ack, in order, naming the limit.
TEST(ingest_grpc, AnOversizeBatchIsRejectedInOrderWithoutParsingItsItems) {
  TempDir dir;
  SystemClock clock;
  IngestOptions options;
  options.limits.max_batch_bytes = 4096;
  AnalyzerUnderTest analyzer(clock, dir.path() / "db", "127.0.0.1:0", options);
  ASSERT_TRUE(analyzer.ok());
  auto stub = Connect(analyzer.address());
  {
    v1::HelloReply reply;
    grpc::ClientContext context;
    ASSERT_TRUE(stub->Hello(&context, MakeHello("h1", 7), &reply).ok());
  }
  const WallTime now = clock.RealtimeNow();
  const std::vector<v1::UploadBatch> sent = {MakeBatch("h1", 7, 1, 5, now),
                                             MakeBatch("h1", 7, 2, 500, now),
                                             MakeBatch("h1", 7, 3, 5, now)};
  ASSERT_GT(sent[1].ByteSizeLong(), 4096u);
  ASSERT_LT(sent[2].ByteSizeLong(), 4096u);
  const std::vector<v1::UploadAck> acks = UploadAll(*stub, sent);
  ASSERT_EQ(acks.size(), 3u);
  EXPECT_EQ(acks[0].status(), v1::UploadAck::STATUS_ACCEPTED);
  EXPECT_EQ(acks[1].batch_seq(), 2u);
  EXPECT_EQ(acks[1].status(), v1::UploadAck::STATUS_REJECTED);
  EXPECT_NE(acks[1].error().find("too_large"), std::string::npos) << acks[1].error();
  EXPECT_EQ(acks[2].status(), v1::UploadAck::STATUS_ACCEPTED);
  EXPECT_EQ(analyzer.stats().Rejected(RejectReason::kTooLarge).Value(), 1u);
  EXPECT_EQ(analyzer.store().LastDurableBatchSeq("h1", 7), 3u);
}

// --- the agent's real Uploader against this service ---

constexpr std::uint32_t kNics = 4;
constexpr std::uint64_t kBoot = 0xB007;
const std::string kAgent = "h003";

agent::upload::UploaderOptions UploaderOptionsFor(const std::string& address) {
  return analyzer::testing::FastUploaderOptions(address);
}

void AppendResults(const Clock& clock, agent::upload::Uploader& uploader, std::uint64_t first,
                   std::uint64_t count) {
  for (std::uint64_t i = first; i < first + count; ++i) {
    v1::ProbeResult result;
    result.set_src_nic(static_cast<std::uint32_t>(i % kNics));
    result.set_dst_nic(static_cast<std::uint32_t>((i + 1) % kNics));
    result.set_sequence(i / kNics);
    result.set_send_time_ns(clock.RealtimeNow().time_since_epoch().count());
    uploader.Append(std::move(result));
  }
}

TEST(ingest_grpc, UploaderAcrossAnAnalyzerRestartStoresEveryAckedResultOnce) {
  TempDir dir;
  const std::filesystem::path db = dir.path() / "db";
  SystemClock clock;
  auto first = std::make_unique<AnalyzerUnderTest>(clock, db, "127.0.0.1:0");
  ASSERT_TRUE(first->ok());
  const int port = first->port();

  agent::upload::Uploader uploader(clock, UploaderOptionsFor(first->address()),
                                   MakeHello(kAgent, kBoot, kNics));
  uploader.Start();
  constexpr std::uint64_t kPhase = 4000;  // 200 batches per phase
  AppendResults(clock, uploader, 0, kPhase);
  ASSERT_TRUE(Eventually([&] { return uploader.Counters().batches_acknowledged >= 8; }));
  // Kill mid-run: some batches acked, some perhaps committing, some on the wire.
  first.reset();
  const std::uint64_t acked_before_kill = uploader.Counters().batches_acknowledged;
  EXPECT_LT(acked_before_kill, kPhase / 20) << "the kill should land mid-run";

  AppendResults(clock, uploader, kPhase, kPhase);
  ASSERT_TRUE(Eventually([&] { return uploader.Counters().connect_failures >= 2; }))
      << "the uploader keeps trying while the analyzer is down";

  AnalyzerUnderTest second(clock, db, "127.0.0.1:" + std::to_string(port));
  ASSERT_TRUE(second.ok()) << "port " << port << " could not be reused";
  AppendResults(clock, uploader, 2 * kPhase, kPhase);
  EXPECT_TRUE(uploader.Shutdown(clock.MonotonicNow() + 20s)) << "everything acknowledged";

  const agent::upload::UploadCounters counters = uploader.Counters();
  EXPECT_EQ(counters.batches_rejected, 0u);
  EXPECT_EQ(counters.batches_dropped, 0u);
  EXPECT_GE(counters.connects, 2u);
  EXPECT_GE(counters.batches_acknowledged, acked_before_kill);

  const auto copies = second.store().CountResultCopies();
  EXPECT_EQ(copies.size(), 3 * kPhase);
  std::uint64_t missing = 0;
  for (std::uint64_t i = 0; i < 3 * kPhase; ++i) {
    const auto it = copies.find({kAgent, kBoot, static_cast<std::uint32_t>(i % kNics), i / kNics});
    if (it == copies.end()) {
      ++missing;
    } else {
      EXPECT_EQ(it->second, 1u) << "result " << i << " stored " << it->second << " times";
    }
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(second.store().LastDurableBatchSeq(kAgent, kBoot), counters.batches_closed);
}

}  // namespace
}  // namespace hostmesh::analyzer::ingest
