// The validation rules as a table: each bad batch is rejected with its reason
// and a message naming what is wrong.
#include "analyzer/ingest/batch_validator.h"

#include <gtest/gtest.h>

#include <functional>

#include "tests/analyzer/store/test_batches.h"

namespace hostmesh::analyzer::ingest {
namespace {

using analyzer::testing::MakeBatch;
using analyzer::testing::MakeHello;
using namespace std::chrono_literals;

const WallTime kNow = VirtualClock::kDefaultWallStart;

struct Case {
  const char* name;
  std::function<void(v1::UploadBatch&)> spoil;
  bool unknown_agent = false;
  std::size_t encoded_bytes = 0;  // 0: the batch's own size
  RejectReason reason;
  const char* message_part;
};

// Ten seconds of NIC `nic`'s counters, ending two seconds ago.
v1::NicTelemetry Telemetry(std::uint32_t nic) {
  v1::NicTelemetry t;
  t.set_nic(nic);
  t.set_end_ns((kNow - 2s).time_since_epoch().count());
  t.set_start_ns((kNow - 12s).time_since_epoch().count());
  return t;
}

TEST(batch_validator, AGoodBatchPasses) {
  const AgentNics nics(MakeHello("h1", 7));
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 100, kNow - 2s);
  EXPECT_FALSE(ValidateBatch(batch, batch.ByteSizeLong(), &nics, kNow, {}));
  batch.mutable_results(1)->set_send_failed(true);  // a probe its NIC could not send
  EXPECT_FALSE(ValidateBatch(batch, batch.ByteSizeLong(), &nics, kNow, {}));
  *batch.add_telemetry() = Telemetry(3);
  EXPECT_FALSE(ValidateBatch(batch, batch.ByteSizeLong(), &nics, kNow, {}));
}

TEST(batch_validator, EachBadBatchIsRejectedWithItsReason) {
  ValidationLimits limits;
  limits.max_results = 500;
  limits.max_paths = 2;
  limits.max_batch_bytes = 1 << 20;
  limits.max_telemetry = 3;
  const std::vector<Case> cases = {
      {"unknown schema", [](v1::UploadBatch& b) { b.set_schema_version(v1::SchemaVersion(7)); },
       false, 0, RejectReason::kSchemaVersion, "schema version 7"},
      {"unspecified schema",
       [](v1::UploadBatch& b) { b.set_schema_version(v1::SCHEMA_VERSION_UNSPECIFIED); }, false, 0,
       RejectReason::kSchemaVersion, "schema version 0"},
      {"never said hello", [](v1::UploadBatch&) {}, true, 0, RejectReason::kUnknownAgent,
       "agent 'h1' boot 7 has not said Hello"},
      {"no agent id", [](v1::UploadBatch& b) { b.clear_agent_id(); }, false, 0,
       RejectReason::kUnknownAgent, "no agent_id"},
      {"batch seq 0", [](v1::UploadBatch& b) { b.set_batch_seq(0); }, false, 0,
       RejectReason::kBadBatchSeq, "batch_seq is 0"},
      {"result from the future",
       [](v1::UploadBatch& b) {
         b.mutable_results(3)->set_send_time_ns((kNow + 1h).time_since_epoch().count());
       },
       false, 0, RejectReason::kFutureTimestamp, "result 3: send_time_ns"},
      {"batch created in the future",
       [](v1::UploadBatch& b) { b.set_created_ns((kNow + 10min).time_since_epoch().count()); },
       false, 0, RejectReason::kFutureTimestamp, "600 s ahead"},
      {"result of last week",
       [](v1::UploadBatch& b) {
         b.mutable_results(0)->set_send_time_ns((kNow - 7 * 24h).time_since_epoch().count());
       },
       false, 0, RejectReason::kPastTimestamp, "604800 s old"},
      {"zero send time", [](v1::UploadBatch& b) { b.mutable_results(1)->set_send_time_ns(0); },
       false, 0, RejectReason::kPastTimestamp, "result 1: send_time_ns 0"},
      {"extreme time",
       [](v1::UploadBatch& b) { b.mutable_results(1)->set_send_time_ns(INT64_MIN); }, false, 0,
       RejectReason::kPastTimestamp, "result 1"},
      {"unknown src nic", [](v1::UploadBatch& b) { b.mutable_results(5)->set_src_nic(9); }, false,
       0, RejectReason::kUnknownNic, "result 5: src_nic 9 is not among the 4 NICs"},
      {"unknown dst nic", [](v1::UploadBatch& b) { b.mutable_results(6)->set_dst_nic(100); }, false,
       0, RejectReason::kUnknownNic, "result 6: dst_nic 100"},
      {"unknown path nic",
       [](v1::UploadBatch& b) {
         v1::PathReport* p = b.add_paths();
         p->set_time_ns(kNow.time_since_epoch().count());
         p->set_src_nic(12);
       },
       false, 0, RejectReason::kUnknownNic, "path report 0: src_nic 12"},
      {"too many results", [](v1::UploadBatch& b) { b = MakeBatch("h1", 7, 1, 501, kNow - 2s); },
       false, 0, RejectReason::kTooManyResults, "501 results (limit 500)"},
      {"too many paths",
       [](v1::UploadBatch& b) {
         for (int i = 0; i < 3; ++i) b.add_paths()->set_time_ns(kNow.time_since_epoch().count());
       },
       false, 0, RejectReason::kTooManyPaths, "3 path reports (limit 2)"},
      {"oversize", [](v1::UploadBatch&) {}, false, (1 << 20) + 1, RejectReason::kTooLarge,
       "1048577 bytes (limit 1048576)"},
      {"too many telemetry records",
       [](v1::UploadBatch& b) {
         for (int i = 0; i < 4; ++i) *b.add_telemetry() = Telemetry(0);
       },
       false, 0, RejectReason::kTooManyTelemetry, "4 NIC telemetry records (limit 3)"},
      {"telemetry of an unknown nic", [](v1::UploadBatch& b) { *b.add_telemetry() = Telemetry(9); },
       false, 0, RejectReason::kUnknownNic, "telemetry 0: nic 9"},
      {"telemetry from the future",
       [](v1::UploadBatch& b) {
         v1::NicTelemetry t = Telemetry(1);
         t.set_end_ns((kNow + 1h).time_since_epoch().count());
         *b.add_telemetry() = t;
       },
       false, 0, RejectReason::kFutureTimestamp, "telemetry 0: end_ns"},
      {"telemetry ending before it starts",
       [](v1::UploadBatch& b) {
         v1::NicTelemetry t = Telemetry(1);
         t.set_start_ns(t.end_ns() + 1);
         *b.add_telemetry() = Telemetry(1);
         *b.add_telemetry() = t;
       },
       false, 0, RejectReason::kBadTelemetry, "telemetry 1: start_ns"},
      {"timeout and send failure at once",
       [](v1::UploadBatch& b) {
         b.mutable_results(2)->set_send_failed(true);
         b.mutable_results(4)->set_send_failed(true);
         b.mutable_results(4)->set_timeout(true);
       },
       false, 0, RejectReason::kBadResult, "result 4: timeout and send_failed"},
  };
  const AgentNics nics(MakeHello("h1", 7));
  for (const Case& c : cases) {
    v1::UploadBatch batch = MakeBatch("h1", 7, 1, 100, kNow - 2s);
    c.spoil(batch);
    const std::size_t bytes = c.encoded_bytes != 0 ? c.encoded_bytes : batch.ByteSizeLong();
    const auto rejection =
        ValidateBatch(batch, bytes, c.unknown_agent ? nullptr : &nics, kNow, limits);
    ASSERT_TRUE(rejection) << c.name << ": accepted";
    EXPECT_EQ(RejectReasonName(rejection->reason), RejectReasonName(c.reason)) << c.name;
    EXPECT_NE(rejection->message.find(c.message_part), std::string::npos)
        << c.name << ": '" << rejection->message << "' lacks '" << c.message_part << "'";
  }
}

TEST(batch_validator, TimeLimitsAreInclusive) {
  const AgentNics nics(MakeHello("h1", 7));
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 1, kNow);
  ValidationLimits limits;
  batch.mutable_results(0)->set_send_time_ns((kNow + limits.max_future).time_since_epoch().count());
  EXPECT_FALSE(ValidateBatch(batch, 0, &nics, kNow, limits));
  batch.mutable_results(0)->set_send_time_ns((kNow - limits.max_age).time_since_epoch().count());
  EXPECT_FALSE(ValidateBatch(batch, 0, &nics, kNow, limits));
}

TEST(batch_validator, NicIdsAboveSixtyFourAreKnownToo) {
  v1::AgentHello hello = MakeHello("h1", 7, 0);
  hello.add_nics()->set_id(70);
  hello.add_nics()->set_id(2);
  const AgentNics nics(hello);
  EXPECT_EQ(nics.size(), 2u);
  EXPECT_TRUE(nics.Has(70));
  EXPECT_TRUE(nics.Has(2));
  EXPECT_FALSE(nics.Has(0));
  EXPECT_FALSE(nics.Has(71));
}

TEST(batch_validator, ReasonNamesAreDistinctLabelValues) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kRejectReasonCount; ++i) {
    names.insert(RejectReasonName(static_cast<RejectReason>(i)));
  }
  EXPECT_EQ(names.size(), kRejectReasonCount);
}

}  // namespace
}  // namespace hostmesh::analyzer::ingest
