// Suite names start with "upload" so `ctest -R upload` selects them.
#include "agent/upload/batcher.h"

#include <gtest/gtest.h>

#include <vector>

#include "agent/upload/spool.h"
#include "agent/upload/wire_messages.h"
#include "proto/wire/packed_results.h"

namespace hostmesh::agent::upload {
namespace {

using namespace std::chrono_literals;

v1::ProbeResult Result(std::uint64_t sequence) {
  v1::ProbeResult result;
  result.set_src_nic(0);
  result.set_dst_nic(1);
  result.set_sequence(sequence);
  return result;
}

TEST(upload_batcher, ClosesWhenFullAndLabelsTheBatch) {
  VirtualClock clock;
  Batcher batcher(clock, {"h003", 42}, 3, 1s);
  EXPECT_FALSE(batcher.Add(Result(1)));
  EXPECT_FALSE(batcher.Add(Result(2)));
  clock.Advance(5ms);
  const SharedBatch batch = batcher.Add(Result(3));
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->results_size(), 3);
  EXPECT_EQ(batch->results(2).sequence(), 3u);
  EXPECT_EQ(batch->agent_id(), "h003");
  EXPECT_EQ(batch->boot_id(), 42u);
  EXPECT_EQ(batch->batch_seq(), 1u);
  EXPECT_EQ(batch->schema_version(), v1::SCHEMA_VERSION_1);
  EXPECT_EQ(batch->created_ns(), clock.RealtimeNow().time_since_epoch().count());
  EXPECT_EQ(batcher.open_items(), 0u);
  EXPECT_FALSE(batcher.Due());
}

TEST(upload_batcher, EveryBatchCarriesTheLoadSheddingStateOfItsClose) {
  VirtualClock clock;
  Batcher batcher(clock, {"h003", 42}, 1, 1s);
  const SharedBatch before = batcher.Add(Result(1));
  ASSERT_TRUE(before);
  EXPECT_FALSE(before->has_load_shedding()) << "self-protection off: no state";
  v1::LoadShedding state;
  state.set_rate_fraction(0.25);
  state.set_since_ns(1234);
  state.set_cause("cgroup cpu throttled 97%");
  batcher.SetLoadShedding(state);
  for (std::uint64_t seq = 2; seq <= 3; ++seq) {
    const SharedBatch batch = batcher.Add(Result(seq));
    ASSERT_TRUE(batch);
    ASSERT_TRUE(batch->has_load_shedding());
    EXPECT_DOUBLE_EQ(batch->load_shedding().rate_fraction(), 0.25);
    EXPECT_EQ(batch->load_shedding().since_ns(), 1234);
    EXPECT_EQ(batch->load_shedding().cause(), "cgroup cpu throttled 97%");
  }
}

TEST(upload_batcher, AgentResultsArePackedAndReadBackAsTheirMessages) {
  VirtualClock clock;
  Batcher batcher(clock, {"h003", 42}, 4, 1s);
  EXPECT_FALSE(batcher.Add(Result(1)));  // an older producer's row
  std::vector<ProbeResult> results(3);
  for (std::size_t i = 0; i < results.size(); ++i) {
    ProbeResult& r = results[i];
    r.src_nic = static_cast<NicId>(i);
    r.dst_nic = 7;
    r.src_port = static_cast<std::uint16_t>(50000 + i);
    r.dst_port = 4791;
    r.sequence = 10 + i;
    r.send_time_ns = 1'700'000'000'000'000'000 - static_cast<std::int64_t>(i) * 3'000;
    r.app_send_ns = r.send_time_ns + 900;
    r.nic_send_ns = i == 1 ? 0 : r.send_time_ns + 2'000;
    r.nic_recv_ns = r.send_time_ns + 15'000;
    r.app_recv_ns = r.send_time_ns + 30'000;
    r.send_timestamp_source = i == 1 ? TimestampSource::kUnspecified : TimestampSource::kKernel;
    r.recv_timestamp_source = TimestampSource::kHardware;
    r.timeout = i == 2;
    r.payload_bytes = 64;
    r.timestamp_error_ns = 120;
  }
  EXPECT_FALSE(batcher.AddResult(results[0]));
  EXPECT_FALSE(batcher.AddResult(results[1]));
  const SharedBatch batch = batcher.AddResult(results[2]);
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->results_size(), 1);
  EXPECT_EQ(batch->packed_results().count(), 3U);
  EXPECT_EQ(batch->packed_results().format(), wire::kPackedResultsFormat);
  v1::UploadBatch read = *batch;
  ASSERT_FALSE(wire::ExpandPackedResults(read, 100).has_value());
  ASSERT_EQ(read.results_size(), 4);
  EXPECT_EQ(read.results(0).sequence(), 1U);
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(read.results(static_cast<int>(i) + 1).SerializeAsString(),
              ToProto(results[i]).SerializeAsString())
        << "result " << i;
  }
  // The next batch's records start their own send-time chain.
  EXPECT_FALSE(batcher.AddResult(results[1]));
  const SharedBatch next = batcher.Close();
  ASSERT_TRUE(next);
  v1::UploadBatch next_read = *next;
  ASSERT_FALSE(wire::ExpandPackedResults(next_read, 100).has_value());
  ASSERT_EQ(next_read.results_size(), 1);
  EXPECT_EQ(next_read.results(0).send_time_ns(), results[1].send_time_ns);
}

TEST(upload_batcher, BatchesOfEverySizeReadBackWhateverTheLastOneTook) {
  // The records' string reserves what the last batch took and grows in
  // steps: batches larger, smaller and much larger than the one before.
  VirtualClock clock;
  Batcher batcher(clock, {"h", 1}, 20'000, 1s);
  std::uint64_t sequence = 0;
  for (const std::size_t count : {700, 3'000, 40, 12'000, 1}) {
    std::vector<ProbeResult> sent;
    SharedBatch batch;
    for (std::size_t i = 0; i < count; ++i) {
      ProbeResult r;
      r.src_nic = static_cast<NicId>(i % 8);
      r.dst_nic = static_cast<NicId>((i + 1) % 8);
      r.src_port = static_cast<std::uint16_t>(49152 + (i * 7919) % 16384);
      r.dst_port = 4791;
      r.sequence = ++sequence;
      // Send-time differences of every varint length, from 1 to 8 bytes
      // (sequence < 2^15, so at most 2^55: no overflow).
      r.send_time_ns = 1'700'000'000'000'000'000 + static_cast<std::int64_t>(sequence << (i % 41));
      r.app_send_ns = r.send_time_ns + 700;
      r.nic_send_ns = r.send_time_ns + 2'000;
      r.nic_recv_ns = r.send_time_ns + static_cast<std::int64_t>(i % 3 == 0 ? 5'000'000 : 15'000);
      r.app_recv_ns = r.nic_recv_ns + 40'000;
      r.send_timestamp_source = TimestampSource::kKernel;
      r.recv_timestamp_source = TimestampSource::kKernel;
      r.payload_bytes = 50;
      sent.push_back(r);
      ASSERT_FALSE(batcher.AddResult(r));
    }
    batch = batcher.Close();
    ASSERT_TRUE(batch);
    v1::UploadBatch read = *batch;
    ASSERT_FALSE(wire::ExpandPackedResults(read, 20'000).has_value()) << count << " results";
    ASSERT_EQ(read.results_size(), static_cast<int>(count));
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_EQ(read.results(static_cast<int>(i)).SerializeAsString(),
                ToProto(sent[i]).SerializeAsString())
          << "batch of " << count << ", result " << i;
    }
    // What the spool's budget counts holds the records.
    EXPECT_GE(Spool::MemoryBytes(*batch), batch->packed_results().records().size());
  }
}

TEST(upload_batcher, PathsCountTowardsTheSize) {
  VirtualClock clock;
  Batcher batcher(clock, {"h", 1}, 2, 1s);
  EXPECT_FALSE(batcher.Add(v1::PathReport{}));
  const SharedBatch batch = batcher.Add(Result(1));
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->paths_size(), 1);
  EXPECT_EQ(batch->results_size(), 1);
}

TEST(upload_batcher, TelemetryCountsTowardsTheSizeAndStartsTheAgeTimer) {
  VirtualClock clock;
  Batcher batcher(clock, {"h", 1}, 2, 1s);
  v1::NicTelemetry telemetry;
  telemetry.set_nic(1);
  EXPECT_FALSE(batcher.Add(telemetry));
  EXPECT_EQ(batcher.Due(), clock.MonotonicNow() + 1s);
  const SharedBatch batch = batcher.Add(Result(1));
  ASSERT_TRUE(batch);
  ASSERT_EQ(batch->telemetry_size(), 1);
  EXPECT_EQ(batch->telemetry(0).nic(), 1u);
  EXPECT_EQ(batch->results_size(), 1);
}

TEST(upload_batcher, AFlightRecordClosesItsBatchAtOnce) {
  VirtualClock clock;
  Batcher batcher(clock, {"h003", 42}, 100, 1s);
  EXPECT_EQ(batcher.Add(v1::ProbeResult{}), nullptr);
  v1::FlightRecord record;
  record.set_incident_id(7);
  record.add_events()->set_time_ns(1);
  const SharedBatch batch = batcher.Add(record);
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->results_size(), 1);
  ASSERT_EQ(batch->flight_records_size(), 1);
  EXPECT_EQ(batch->flight_records(0).incident_id(), 7u);
  EXPECT_EQ(batcher.open_items(), 0u);
}

TEST(upload_batcher, ClosesByAgeOfTheOldestItem) {
  VirtualClock clock;
  Batcher batcher(clock, {"h", 1}, 1000, 1s);
  EXPECT_FALSE(batcher.CloseIfDue());  // nothing open, nothing due
  batcher.Add(Result(1));
  const MonoTime first = clock.MonotonicNow();
  ASSERT_EQ(batcher.Due(), first + 1s);
  clock.Advance(600ms);
  batcher.Add(Result(2));
  EXPECT_EQ(batcher.Due(), first + 1s) << "the oldest item sets the age, not the newest";
  clock.Advance(399ms);
  EXPECT_FALSE(batcher.CloseIfDue());
  clock.Advance(1ms);
  const SharedBatch batch = batcher.CloseIfDue();
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->results_size(), 2);
  EXPECT_FALSE(batcher.Due());
}

TEST(upload_batcher, SequenceStartsAtOneWithoutGaps) {
  VirtualClock clock;
  Batcher batcher(clock, {"h", 1}, 2, 1s);
  std::vector<std::uint64_t> seqs;
  for (std::uint64_t i = 0; i < 7; ++i) {
    if (auto batch = batcher.Add(Result(i))) seqs.push_back(batch->batch_seq());
    if (i == 4) {  // an age close in between must not skip a number
      clock.Advance(1s);
      if (auto batch = batcher.CloseIfDue()) seqs.push_back(batch->batch_seq());
    }
  }
  if (auto batch = batcher.Close()) seqs.push_back(batch->batch_seq());
  EXPECT_FALSE(batcher.Close()) << "an empty batch is never closed (it would waste a number)";
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(batcher.last_batch_seq(), 4u);
}

TEST(upload_batcher, AClosedBatchOutlivesTheBatcherAndIsNotTouchedByLaterItems) {
  VirtualClock clock;
  SharedBatch batch;
  {
    Batcher batcher(clock, {"h", 1}, 2, 1s);
    batcher.Add(Result(1));
    batch = batcher.Add(Result(2));
    ASSERT_TRUE(batch);
    batcher.Add(Result(3));  // the next batch, in an arena of its own
    batcher.Add(Result(4));
  }
  ASSERT_EQ(batch->results_size(), 2);
  EXPECT_EQ(batch->results(1).sequence(), 2u);
  EXPECT_EQ(batch->batch_seq(), 1u);
}

TEST(upload_batcher, ZeroMaxItemsMeansOne) {
  VirtualClock clock;
  Batcher batcher(clock, {"h", 1}, 0, 1s);
  EXPECT_TRUE(batcher.Add(Result(1)));
}

}  // namespace
}  // namespace hostmesh::agent::upload
