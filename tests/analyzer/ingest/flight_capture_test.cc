// The analyzer asks an agent for its flight recorder and stores the answer:
// a real IngestServer and store on 127.0.0.1, the agent's own Uploader with
// a FlightRecorder and CaptureDesk. The request rides on an ack, the record
// comes back in a batch, and it is still there after the analyzer restarts.
// Real time, but no fixed sleeps: waits poll a condition.
#include <gtest/gtest.h>

#include "agent/recorder/capture_desk.h"
#include "agent/recorder/flight_recorder.h"
#include "agent/upload/uploader.h"
#include "analyzer/ingest/capture_outbox.h"
#include "tests/analyzer/ingest/analyzer_under_test.h"
#include "tests/analyzer/ingest/fast_uploader_options.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"

namespace hostmesh::analyzer::ingest {
namespace {

using analyzer::testing::AnalyzerUnderTest;
using analyzer::testing::Eventually;
using analyzer::testing::MakeHello;
using analyzer::testing::TempDir;
using namespace std::chrono_literals;

constexpr char kAgent[] = "h007";
constexpr std::uint64_t kBoot = 99;
constexpr std::uint32_t kNics = 4;
constexpr std::uint64_t kIncident = 4242;

agent::upload::UploaderOptions UploaderOptionsFor(const std::string& address,
                                                  agent::recorder::CaptureDesk& desk) {
  agent::upload::UploaderOptions options = analyzer::testing::FastUploaderOptions(address);
  options.answer_capture = [&desk](const v1::CaptureRequest& request, MonoTime now) {
    return desk.Answer(request, now);
  };
  return options;
}

// A result into the recorder and the uploader, as the agent's loop does.
void Probe(const Clock& clock, agent::recorder::FlightRecorder& rec,
           agent::upload::Uploader& uploader, std::uint64_t i) {
  agent::ProbeResult r;
  r.src_nic = static_cast<agent::NicId>(i % kNics);
  r.dst_nic = static_cast<agent::NicId>((i + 1) % kNics);
  r.sequence = i;
  r.src_port = static_cast<std::uint16_t>(49152 + i % 100);
  r.send_time_ns = clock.RealtimeNow().time_since_epoch().count();
  r.nic_send_ns = r.send_time_ns + 1000;
  r.nic_recv_ns = r.send_time_ns + 6000;
  rec.RecordProbe(r);
  v1::ProbeResult wire;
  wire.set_src_nic(r.src_nic);
  wire.set_dst_nic(r.dst_nic);
  wire.set_sequence(r.sequence);
  wire.set_send_time_ns(r.send_time_ns);
  uploader.Append(wire);
}

std::vector<v1::FlightRecord> Stored(store::Store& store, std::uint64_t incident,
                                     std::vector<std::string>* agents = nullptr) {
  std::vector<v1::FlightRecord> out;
  const store::StoreStatus status =
      store.ScanFlightRecords(incident, [&](const store::StoredFlightRecord& s) {
        out.push_back(*s.record);
        if (agents != nullptr) agents->emplace_back(s.agent_id);
        return true;
      });
  EXPECT_TRUE(status.ok()) << status.error;
  return out;
}

TEST(flight_capture, TheAnalyzerAsksAndStoresTheAgentsRecordAcrossARestart) {
  TempDir dir;
  const std::filesystem::path db = dir.path() / "db";
  SystemClock clock;
  CaptureOutbox outbox(clock);
  IngestOptions options;
  options.captures = &outbox;
  auto analyzer = std::make_unique<AnalyzerUnderTest>(clock, db, "127.0.0.1:0", options);
  ASSERT_TRUE(analyzer->ok());

  agent::recorder::FlightRecorder rec(clock, 64 << 10);
  agent::recorder::CaptureDesk desk(rec, {}, {}, clock.MonotonicNow());
  agent::upload::Uploader uploader(clock, UploaderOptionsFor(analyzer->address(), desk),
                                   MakeHello(kAgent, kBoot, kNics));
  uploader.Start();
  const std::int64_t from = clock.RealtimeNow().time_since_epoch().count();
  std::uint64_t i = 0;
  for (; i < 50; ++i) Probe(clock, rec, uploader, i);
  ASSERT_TRUE(Eventually([&] { return uploader.Counters().batches_acknowledged >= 2; }));

  // The incident's range is what the agent recorded so far.
  const std::int64_t to = clock.RealtimeNow().time_since_epoch().count() + 1;
  v1::CaptureRequest request;
  request.set_incident_id(kIncident);
  request.set_from_ns(from);
  request.set_to_ns(to);
  ASSERT_TRUE(outbox.Request(kAgent, request));
  // Asked again before it went out: one request, not two.
  ASSERT_TRUE(outbox.Request(kAgent, request));
  EXPECT_EQ(outbox.counters().pending, 1u);

  // The agent keeps probing; an ack of one of its batches carries the request.
  ASSERT_TRUE(Eventually([&] {
    Probe(clock, rec, uploader, i++);
    return !Stored(analyzer->store(), kIncident).empty();
  }));
  EXPECT_EQ(outbox.counters().sent, 1u);
  EXPECT_EQ(outbox.counters().pending, 0u);
  EXPECT_EQ(desk.counters().requested, 1u);
  EXPECT_EQ(desk.counters().uploaded, 1u);

  std::vector<std::string> agents;
  const std::vector<v1::FlightRecord> records = Stored(analyzer->store(), kIncident, &agents);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(agents, std::vector<std::string>{kAgent});
  const v1::FlightRecord& record = records.front();
  EXPECT_EQ(record.incident_id(), kIncident);
  EXPECT_EQ(record.from_ns(), from);
  EXPECT_EQ(record.to_ns(), to);
  EXPECT_EQ(record.events_size(), 50);  // the probes before `to`, none after
  EXPECT_EQ(record.events(0).kind(), v1::FlightEvent::KIND_PROBE);
  EXPECT_EQ(record.events(0).value_ns(), 5000);
  EXPECT_FALSE(record.truncated());
  EXPECT_EQ(record.dropped_before(), 0u);
  EXPECT_TRUE(Stored(analyzer->store(), kIncident + 1).empty());

  ASSERT_TRUE(uploader.Shutdown(MonoTime(clock.MonotonicNow() + 10s)));
  // Restarted on the same data dir: the record is durable.
  analyzer.reset();
  AnalyzerUnderTest restarted(clock, db, "127.0.0.1:0");
  ASSERT_TRUE(restarted.ok());
  EXPECT_EQ(Stored(restarted.store(), kIncident).size(), 1u);
}

}  // namespace
}  // namespace hostmesh::analyzer::ingest
