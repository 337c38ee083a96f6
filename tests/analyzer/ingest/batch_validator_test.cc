// The validation rules as a table: each bad batch is rejected with its reason
// and a message naming what is wrong.
#include "analyzer/ingest/batch_validator.h"

#include <gtest/gtest.h>

#include <cmath>
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

// A good path report of the agent's NICs 0 -> 1, two hops, the second silent.
v1::PathReport Path() {
  v1::PathReport p;
  p.set_time_ns((kNow - 1s).time_since_epoch().count());
  p.set_src_nic(0);
  p.set_dst_nic(1);
  p.set_src_ip("198.18.0.1");
  p.set_dst_ip("198.18.0.5");
  p.set_src_port(49152);
  p.set_dst_port(4791);
  p.set_protocol(17);
  v1::Hop* hop = p.add_hops();
  hop->set_ttl(1);
  hop->set_address("198.19.0.1");
  hop->set_rtt_ns(20'000);
  p.add_hops()->set_ttl(2);
  return p;
}

TEST(batch_validator, AGoodBatchPasses) {
  const AgentNics nics(MakeHello("h1", 7));
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 100, kNow - 2s);
  EXPECT_FALSE(ValidateBatch(batch, batch.ByteSizeLong(), &nics, kNow, {}));
  batch.mutable_results(1)->set_send_failed(true);  // a probe its NIC could not send
  EXPECT_FALSE(ValidateBatch(batch, batch.ByteSizeLong(), &nics, kNow, {}));
  *batch.add_telemetry() = Telemetry(3);
  EXPECT_FALSE(ValidateBatch(batch, batch.ByteSizeLong(), &nics, kNow, {}));
  *batch.add_paths() = Path();
  batch.mutable_paths(0)->set_dst_ip("fd00::5");  // IPv6 fabrics too
  EXPECT_FALSE(ValidateBatch(batch, batch.ByteSizeLong(), &nics, kNow, {}));
  // Hardware stamps of two NICs may disagree by their stated error bound.
  v1::ProbeResult& r = *batch.mutable_results(7);
  r.set_timestamp_error_ns(3'000'000);
  r.set_nic_recv_ns(r.nic_send_ns() - 3'500'000);
  EXPECT_FALSE(ValidateBatch(batch, batch.ByteSizeLong(), &nics, kNow, {}));
}

v1::FlightRecord Flight(int events = 3) {
  v1::FlightRecord f;
  f.set_incident_id(11);
  f.set_from_ns((kNow - 5min).time_since_epoch().count());
  f.set_to_ns((kNow - 1s).time_since_epoch().count());
  for (int i = 0; i < events; ++i) {
    v1::FlightEvent* e = f.add_events();
    e->set_time_ns((kNow - 2min).time_since_epoch().count() + i);
    e->set_kind(v1::FlightEvent::KIND_PROBE);
  }
  return f;
}

// The message of the rejection of `batch` with one flight record changed by `change`.
std::optional<Rejection> WithFlight(const std::function<void(v1::FlightRecord&)>& change,
                                    const ValidationLimits& limits = {}) {
  const AgentNics nics(MakeHello("h1", 7));
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 10, kNow - 2s);
  change(*batch.add_flight_records() = Flight());
  return ValidateBatch(batch, batch.ByteSizeLong(), &nics, kNow, limits);
}

TEST(batch_validator, ALoadSheddingStateOfDaysAgoPasses) {
  const AgentNics nics(MakeHello("h1", 7));
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 10, kNow - 2s);
  v1::LoadShedding* s = batch.mutable_load_shedding();
  s->set_rate_fraction(0.1);
  s->set_since_ns((kNow - 72h).time_since_epoch().count());
  s->set_cause("host cpu pressure 88%");
  EXPECT_FALSE(ValidateBatch(batch, batch.ByteSizeLong(), &nics, kNow, ValidationLimits{}));
  s->set_rate_fraction(1);
  s->clear_cause();
  EXPECT_FALSE(ValidateBatch(batch, batch.ByteSizeLong(), &nics, kNow, ValidationLimits{}));
}

TEST(batch_validator, FlightRecordsAreBoundedAndChecked) {
  EXPECT_FALSE(WithFlight([](v1::FlightRecord&) {}));
  const AgentNics nics(MakeHello("h1", 7));
  v1::UploadBatch three = MakeBatch("h1", 7, 1, 10, kNow - 2s);
  for (int i = 0; i < 3; ++i) *three.add_flight_records() = Flight();
  auto r = ValidateBatch(three, three.ByteSizeLong(), &nics, kNow, {});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reason, RejectReason::kTooManyFlightRecords);
  EXPECT_EQ(r->message, "batch holds 3 flight records (limit 2)");

  ValidationLimits small;
  small.max_flight_events = 2;
  r = WithFlight([](v1::FlightRecord&) {}, small);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reason, RejectReason::kBadFlightRecord);
  EXPECT_EQ(r->message, "flight record 0: events holds 3 events (limit 2)");
  small = {};
  small.max_flight_record_bytes = 20;
  r = WithFlight([](v1::FlightRecord&) {}, small);
  ASSERT_TRUE(r);
  EXPECT_NE(r->message.find("bytes (limit 20)"), std::string::npos) << r->message;

  r = WithFlight([](v1::FlightRecord& f) { f.set_incident_id(0); });
  ASSERT_TRUE(r);
  EXPECT_EQ(r->message, "flight record 0: incident_id is 0 (local captures are not uploaded)");
  r = WithFlight([](v1::FlightRecord& f) { f.set_to_ns(f.from_ns()); });
  ASSERT_TRUE(r);
  EXPECT_NE(r->message.find("flight record 0: from_ns"), std::string::npos) << r->message;
  r = WithFlight([](v1::FlightRecord& f) { f.set_from_ns(INT64_MIN); });
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reason, RejectReason::kBadFlightRecord);
  r = WithFlight([](v1::FlightRecord& f) {
    f.set_from_ns(f.from_ns() + 1'000'000'000'000'000);
    f.set_to_ns(f.to_ns() + 1'000'000'000'000'000);
  });
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reason, RejectReason::kFutureTimestamp);
  r = WithFlight([](v1::FlightRecord& f) { f.mutable_events(1)->set_text(std::string(513, 'x')); });
  ASSERT_TRUE(r);
  EXPECT_EQ(r->message, "flight record 0: events[1].text is 513 bytes (limit 512)");
  r = WithFlight([](v1::FlightRecord& f) {
    f.mutable_events(2)->set_kind(static_cast<v1::FlightEvent::Kind>(99));
  });
  ASSERT_TRUE(r);
  EXPECT_EQ(r->message, "flight record 0: events[2].kind 99 is not a flight event kind");
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
      // Once truncated into another agent's store key.
      {"agent id over the limit", [](v1::UploadBatch& b) { b.set_agent_id(std::string(300, 'a')); },
       false, 0, RejectReason::kBadAgentId, "agent_id must be at most 253 characters"},
      {"agent id with a newline", [](v1::UploadBatch& b) { b.set_agent_id("h1\nh2"); }, false, 0,
       RejectReason::kBadAgentId, "agent_id must be printable ASCII"},
      // Once reached signed overflow in the window accumulator.
      {"int64-extreme stamp",
       [](v1::UploadBatch& b) { b.mutable_results(1)->set_nic_recv_ns(INT64_MAX); }, false, 0,
       RejectReason::kBadResult, "result 1: nic_recv_ns 9223372036854775807 is more than 600 s"},
      {"int64-extreme negative stamp",
       [](v1::UploadBatch& b) { b.mutable_results(1)->set_app_send_ns(INT64_MIN); }, false, 0,
       RejectReason::kBadResult, "result 1: app_send_ns"},
      {"negative clock error",
       [](v1::UploadBatch& b) { b.mutable_results(3)->set_timestamp_error_ns(-1); }, false, 0,
       RejectReason::kBadResult, "result 3: timestamp_error_ns -1"},
      {"port beyond 16 bits", [](v1::UploadBatch& b) { b.mutable_results(3)->set_src_port(70000); },
       false, 0, RejectReason::kBadResult, "result 3: src_port"},
      {"path source that is no address",
       [](v1::UploadBatch& b) {
         *b.add_paths() = Path();
         b.mutable_paths(0)->set_src_ip("198.18.0.1; drop");
       },
       false, 0, RejectReason::kBadPath, "path report 0: src_ip"},
      {"hop that is no address",
       [](v1::UploadBatch& b) {
         *b.add_paths() = Path();
         b.mutable_paths(0)->mutable_hops(1)->set_address("spine-1");
       },
       false, 0, RejectReason::kBadPath, "path report 0: hops[1].address"},
      {"more hops than TTLs",
       [](v1::UploadBatch& b) {
         *b.add_paths() = Path();
         for (int i = 0; i < 300; ++i) b.mutable_paths(0)->add_hops();
       },
       false, 0, RejectReason::kBadPath, "holds 302 hops (limit 255)"},
      {"negative round trip",
       [](v1::UploadBatch& b) {
         *b.add_paths() = Path();
         b.mutable_paths(0)->mutable_hops(0)->set_rtt_ns(-5);
       },
       false, 0, RejectReason::kBadPath, "hops[0].rtt_ns -5"},
      {"telemetry over two days",
       [](v1::UploadBatch& b) {
         v1::NicTelemetry t = Telemetry(1);
         t.set_start_ns(t.end_ns() - 48 * 3600 * 1'000'000'000LL);
         *b.add_telemetry() = t;
       },
       false, 0, RejectReason::kBadTelemetry, "more than a day before end_ns"},
      {"telemetry starting at int64 min",
       [](v1::UploadBatch& b) {
         v1::NicTelemetry t = Telemetry(1);
         t.set_start_ns(INT64_MIN);
         *b.add_telemetry() = t;
       },
       false, 0, RejectReason::kBadTelemetry, "telemetry 0: start_ns"},
      {"shedding rate zero",
       [](v1::UploadBatch& b) { b.mutable_load_shedding()->set_rate_fraction(0); }, false, 0,
       RejectReason::kBadLoadShedding, "load_shedding.rate_fraction 0.000000 is not in (0, 1]"},
      {"shedding rate NaN",
       [](v1::UploadBatch& b) { b.mutable_load_shedding()->set_rate_fraction(std::nan("")); },
       false, 0, RejectReason::kBadLoadShedding, "rate_fraction"},
      {"shedding cause too long",
       [](v1::UploadBatch& b) {
         b.mutable_load_shedding()->set_rate_fraction(0.5);
         b.mutable_load_shedding()->set_cause(std::string(129, 'x'));
       },
       false, 0, RejectReason::kBadLoadShedding, "cause is 129 bytes (limit 128)"},
      {"shedding cause with a control character",
       [](v1::UploadBatch& b) {
         b.mutable_load_shedding()->set_rate_fraction(0.5);
         b.mutable_load_shedding()->set_cause("cpu\x1b[31m");
       },
       false, 0, RejectReason::kBadLoadShedding, "control character"},
      {"shedding signal too long",
       [](v1::UploadBatch& b) {
         b.mutable_load_shedding()->set_rate_fraction(0.5);
         b.mutable_load_shedding()->set_signal(std::string(33, 's'));
       },
       false, 0, RejectReason::kBadLoadShedding, "signal is 33 bytes (limit 32)"},
      {"shedding since the future",
       [](v1::UploadBatch& b) {
         b.mutable_load_shedding()->set_rate_fraction(0.5);
         b.mutable_load_shedding()->set_since_ns((kNow + 1h).time_since_epoch().count());
       },
       false, 0, RejectReason::kBadLoadShedding, "since_ns"},
      {"pause priority 9",
       [](v1::UploadBatch& b) {
         v1::NicTelemetry t = Telemetry(1);
         v1::CounterDelta* d = t.add_deltas();
         d->set_counter(v1::NIC_COUNTER_RX_PAUSE);
         d->set_priority(9);
         *b.add_telemetry() = t;
       },
       false, 0, RejectReason::kBadTelemetry, "deltas[0].priority"},
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

// Moves a result in time, its four stamps with it.
void SendAt(v1::ProbeResult& r, WallTime t) {
  const std::int64_t shift = t.time_since_epoch().count() - r.send_time_ns();
  r.set_send_time_ns(r.send_time_ns() + shift);
  r.set_app_send_ns(r.app_send_ns() + shift);
  r.set_nic_send_ns(r.nic_send_ns() + shift);
  r.set_nic_recv_ns(r.nic_recv_ns() + shift);
  r.set_app_recv_ns(r.app_recv_ns() + shift);
}

// Honest agents send receive stamps before their send: soft-RoCE's software
// stamps, polled out of order, did by 2-4 ms under QEMU. The batch is kept;
// only the contradicting pair is cleared, so the probe still counts.
TEST(batch_validator, AReceiveBeforeItsSendBeyondTheErrorClearsThatPairOnly) {
  const AgentNics nics(MakeHello("h1", 7));
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 4, kNow - 2s);
  v1::ProbeResult& nic = *batch.mutable_results(1);
  nic.set_timestamp_error_ns(500'000);
  nic.set_nic_recv_ns(nic.nic_send_ns() - 2'000'000);
  v1::ProbeResult& app = *batch.mutable_results(2);
  app.set_app_recv_ns(app.app_send_ns() - 5'000'000);
  v1::ProbeResult& within = *batch.mutable_results(3);
  within.set_timestamp_error_ns(3'000'000);
  within.set_nic_recv_ns(within.nic_send_ns() - 3'500'000);  // error + slack covers it
  const v1::ProbeResult nic_before = nic, app_before = app, within_before = within;
  EXPECT_FALSE(ValidateBatch(batch, batch.ByteSizeLong(), &nics, kNow, {}));

  EXPECT_EQ(ClearContradictoryStamps(batch), 2u);
  EXPECT_EQ(nic.nic_send_ns(), 0);
  EXPECT_EQ(nic.nic_recv_ns(), 0);
  EXPECT_EQ(nic.app_send_ns(), nic_before.app_send_ns()) << "the other pair is kept";
  EXPECT_EQ(nic.app_recv_ns(), nic_before.app_recv_ns());
  EXPECT_EQ(app.app_send_ns(), 0);
  EXPECT_EQ(app.app_recv_ns(), 0);
  EXPECT_EQ(app.nic_send_ns(), app_before.nic_send_ns());
  EXPECT_EQ(within.SerializeAsString(), within_before.SerializeAsString());
  EXPECT_EQ(batch.results_size(), 4);
  EXPECT_EQ(ClearContradictoryStamps(batch), 0u) << "nothing left to clear";
}

TEST(batch_validator, TimeLimitsAreInclusive) {
  const AgentNics nics(MakeHello("h1", 7));
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 1, kNow);
  ValidationLimits limits;
  SendAt(*batch.mutable_results(0), kNow + limits.max_future);
  EXPECT_FALSE(ValidateBatch(batch, 0, &nics, kNow, limits));
  SendAt(*batch.mutable_results(0), kNow - limits.max_age);
  EXPECT_FALSE(ValidateBatch(batch, 0, &nics, kNow, limits));
}

TEST(batch_validator, HellosAreBoundedNamedAndTheirNicsUnique) {
  const ValidationLimits limits;
  const auto check = [&](const v1::AgentHello& h) {
    return ValidateHello(h, h.ByteSizeLong(), limits).value_or("");
  };
  EXPECT_EQ(check(MakeHello("h1", 7)), "");
  v1::AgentHello h = MakeHello("h1", 7);
  h.set_host(std::string(10'000, 'x'));  // 100 KB host names were once accepted
  EXPECT_NE(check(h).find("host must be at most 253 characters"), std::string::npos) << check(h);
  h = MakeHello("h1", 7);
  h.set_host("");
  EXPECT_NE(check(h).find("host must not be empty"), std::string::npos);
  h = MakeHello("h1", 7);
  h.mutable_nics(2)->set_id(0);
  EXPECT_NE(check(h).find("nics[2].id 0 is listed twice"), std::string::npos);
  h = MakeHello("h1", 7);
  h.mutable_nics(1)->set_ip("not an ip");
  EXPECT_NE(check(h).find("nics[1].ip"), std::string::npos);
  h = MakeHello("h1", 7, 300);
  EXPECT_NE(check(h).find("300 NICs (limit 256)"), std::string::npos);
  h = MakeHello("h1", 7);
  EXPECT_NE(ValidateHello(h, 17 << 20, limits).value_or("").find("bytes (limit 65536)"),
            std::string::npos);  // a 17 MB Hello was once accepted
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
