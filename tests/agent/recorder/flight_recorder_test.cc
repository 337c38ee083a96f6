// The recorder's sources into the ring, and extraction into a FlightRecord
// with its event and byte caps.
#include "agent/recorder/flight_recorder.h"

#include <gtest/gtest.h>

#include "agent/recorder/recorder_log_tap.h"
#include "common/base/logging.h"

namespace hostmesh::agent::recorder {
namespace {

constexpr std::int64_t kMs = 1'000'000;

ProbeResult Result(std::int64_t send_ns, bool timeout = false) {
  ProbeResult r;
  r.src_nic = 1;
  r.dst_nic = 2;
  r.src_port = 50000;
  r.send_time_ns = send_ns;
  if (!timeout) {
    r.nic_send_ns = send_ns + 1000;
    r.nic_recv_ns = send_ns + 9000;
  }
  r.timeout = timeout;
  return r;
}

TEST(FlightRecorderTest, ProbesBecomeCompactEvents) {
  VirtualClock clock;
  FlightRecorder rec(clock, 64 << 10);
  rec.RecordProbe(Result(10 * kMs));
  rec.RecordProbe(Result(20 * kMs, /*timeout=*/true));
  const v1::FlightRecord record = rec.Extract(7, 0, 100 * kMs);
  EXPECT_EQ(record.incident_id(), 7u);
  ASSERT_EQ(record.events_size(), 2);
  const v1::FlightEvent& ok = record.events(0);
  EXPECT_EQ(ok.kind(), v1::FlightEvent::KIND_PROBE);
  EXPECT_EQ(ok.nic(), 1u);
  EXPECT_EQ(ok.peer_nic(), 2u);
  EXPECT_EQ(ok.port(), 50000u);
  EXPECT_EQ(ok.value_ns(), 8000);
  EXPECT_EQ(record.events(1).value_ns(), -1);
  EXPECT_EQ(record.events(1).flags(), kProbeTimeout);
  EXPECT_FALSE(record.truncated());
  EXPECT_EQ(rec.counters().bytes, 2 * kProbeBytes);
}

TEST(FlightRecorderTest, EventsComeOutByTimeWhateverTheOrderTheyWereRecordedIn) {
  VirtualClock clock;
  clock.SetRealtime(WallTime{std::chrono::milliseconds{600}});
  FlightRecorder rec(clock, 64 << 10);
  rec.RecordLog("verbs", "warning", "nic1: port down");  // stamped now: 600 ms
  rec.RecordProbe(Result(100 * kMs, /*timeout=*/true));  // its outcome known late
  rec.RecordProbe(Result(50 * kMs));
  const v1::FlightRecord record = rec.Extract(1, 0, 1000 * kMs);
  ASSERT_EQ(record.events_size(), 3);
  EXPECT_EQ(record.events(0).time_ns(), 50 * kMs);
  EXPECT_EQ(record.events(1).time_ns(), 100 * kMs);
  EXPECT_EQ(record.events(2).kind(), v1::FlightEvent::KIND_LOG);
}

TEST(FlightRecorderTest, PathsCountersAndUntimedEventsAreRecorded) {
  VirtualClock clock;
  FlightRecorder rec(clock, 64 << 10);
  tracer::PathReport path;
  path.src_nic = 0;
  path.dst_nic = 3;
  path.tuple.sport = 49200;
  tracer::Hop first;
  first.ttl = 1;
  first.address = *net::Ipv4::Parse("10.0.0.1");
  tracer::Hop silent;
  silent.ttl = 2;
  path.hops = {first, silent};
  path.changed = true;
  path.time = clock.RealtimeNow();
  rec.RecordPath(path);
  v1::NicTelemetry t;
  t.set_nic(2);
  t.set_start_ns(clock.RealtimeNow().time_since_epoch().count() - 10'000 * kMs);
  t.set_end_ns(clock.RealtimeNow().time_since_epoch().count());
  v1::CounterDelta* d = t.add_deltas();
  d->set_counter(v1::NIC_COUNTER_RX_FCS_ERRORS);
  d->set_delta(12);
  t.add_deltas()->set_counter(v1::NIC_COUNTER_LINK_DOWNED);  // 0: left out
  rec.RecordCounters(t);
  FlightEntry reopen;
  reopen.kind = FlightKind::kTransportReopen;
  reopen.nic = 1;
  rec.Record(reopen);  // no time: the clock's
  const std::int64_t now = clock.RealtimeNow().time_since_epoch().count();
  const v1::FlightRecord record = rec.Extract(1, now - 1, now + 1);
  ASSERT_EQ(record.events_size(), 3);
  EXPECT_EQ(record.events(0).kind(), v1::FlightEvent::KIND_TRACE);
  EXPECT_EQ(record.events(0).text(), "1:10.0.0.1 2:*");
  EXPECT_EQ(record.events(0).flags() & kTraceChanged, kTraceChanged);
  EXPECT_EQ(record.events(1).kind(), v1::FlightEvent::KIND_COUNTERS);
  EXPECT_EQ(record.events(1).text(), "rx_fcs_errors=12");
  EXPECT_EQ(record.events(2).kind(), v1::FlightEvent::KIND_TRANSPORT_REOPEN);
  EXPECT_EQ(record.events(2).time_ns(), now);
}

TEST(FlightRecorderTest, ExtractKeepsTheNewestWithinTheCaps) {
  VirtualClock clock;
  FlightRecorder rec(clock, 64 << 10);
  for (int i = 1; i <= 1000; ++i) rec.RecordProbe(Result(i * kMs));
  const v1::FlightRecord by_count = rec.Extract(1, 0, 2000 * kMs, {.max_events = 100});
  ASSERT_EQ(by_count.events_size(), 100);
  EXPECT_TRUE(by_count.truncated());
  EXPECT_EQ(by_count.events(0).time_ns(), 901 * kMs);
  EXPECT_EQ(by_count.events(99).time_ns(), 1000 * kMs);
  const v1::FlightRecord by_bytes = rec.Extract(1, 0, 2000 * kMs, {.max_bytes = 4096});
  EXPECT_TRUE(by_bytes.truncated());
  EXPECT_LE(by_bytes.ByteSizeLong(), 4096u);
  EXPECT_GT(by_bytes.events_size(), 50);
  EXPECT_EQ(by_bytes.events(by_bytes.events_size() - 1).time_ns(), 1000 * kMs);
}

TEST(FlightRecorderTest, WarnLinesReachTheRingThroughTheLogTap) {
  VirtualClock clock;
  FlightRecorder rec(clock, 64 << 10);
  {
    RecorderLogTap tap(rec);
    GetLogger("recorder_test")->info("not kept");
    GetLogger("recorder_test")->warn("kept: {}", 42);
  }
  GetLogger("recorder_test")->warn("after the tap went: not kept");
  const std::int64_t now = clock.RealtimeNow().time_since_epoch().count();
  const v1::FlightRecord record = rec.Extract(1, now - 1, now + 1);
  ASSERT_EQ(record.events_size(), 1);
  EXPECT_EQ(record.events(0).kind(), v1::FlightEvent::KIND_LOG);
  EXPECT_EQ(record.events(0).text(), "warn [recorder_test] kept: 42");
}

}  // namespace
}  // namespace hostmesh::agent::recorder
