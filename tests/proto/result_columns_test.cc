#include "proto/wire/result_columns.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>

namespace hostmesh::wire {
namespace {

using google::protobuf::util::MessageDifferencer;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

v1::ProbeResult Row(std::uint64_t seq, std::int64_t send) {
  v1::ProbeResult r;
  r.set_src_nic(static_cast<std::uint32_t>(seq % 8));
  r.set_dst_nic(static_cast<std::uint32_t>((seq + 3) % 8));
  r.set_src_port(49152 + static_cast<std::uint32_t>(seq % 1000));
  r.set_dst_port(4791);
  r.set_sequence(seq);
  r.set_send_time_ns(send);
  r.set_app_send_ns(send + 1'200);
  r.set_nic_send_ns(send + 4'000);
  r.set_nic_recv_ns(send + 19'000);
  r.set_app_recv_ns(send + 27'000);
  r.set_send_timestamp_source(v1::TIMESTAMP_SOURCE_KERNEL);
  r.set_recv_timestamp_source(v1::TIMESTAMP_SOURCE_HARDWARE);
  r.set_payload_bytes(64);
  r.set_timestamp_error_ns(150);
  return r;
}

// Rows through columns and back, by the decoder the analyzer runs.
v1::UploadBatch RoundTrip(const v1::UploadBatch& rows) {
  v1::UploadBatch columns;
  std::int64_t previous = 0;
  AppendRowsToColumns(rows.results(), *columns.mutable_result_columns(), previous);
  v1::UploadBatch wire;
  EXPECT_TRUE(wire.ParseFromString(columns.SerializeAsString()));
  EXPECT_FALSE(ExpandResultColumns(wire, 100'000).has_value());
  EXPECT_FALSE(wire.has_result_columns());
  return wire;
}

TEST(result_columns, EveryFieldOfEveryResultComesBackAsItWas) {
  v1::UploadBatch rows;
  std::mt19937_64 random(7);
  std::int64_t t = 1'700'000'000'000'000'000;
  for (std::uint64_t i = 0; i < 500; ++i) {
    // Timeouts arrive late: send times go back as well as forward.
    t += static_cast<std::int64_t>(random() % 2'000'000) - 400'000;
    v1::ProbeResult r = Row(i, t);
    switch (i % 5) {
      case 1:  // a timeout: no receive stamps
        r.set_timeout(true);
        r.set_nic_recv_ns(0);
        r.set_app_recv_ns(0);
        break;
      case 2:  // a send failure with no stamps but the app's
        r.set_send_failed(true);
        r.set_nic_send_ns(0);
        r.set_nic_recv_ns(0);
        r.set_app_recv_ns(0);
        r.set_send_timestamp_source(v1::TIMESTAMP_SOURCE_UNSPECIFIED);
        break;
      case 3:  // a stamp before the send (another clock), and no clock error
        r.set_nic_send_ns(t - 5'000);
        r.set_timestamp_error_ns(0);
        break;
      default:
        break;
    }
    *rows.add_results() = r;
  }
  const v1::UploadBatch back = RoundTrip(rows);
  ASSERT_EQ(back.results_size(), rows.results_size());
  for (int i = 0; i < rows.results_size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(back.results(i), rows.results(i))) << "result " << i;
  }
}

TEST(result_columns, ExtremeTimesGoThroughUnchanged) {
  // The validator judges values; the wire form must not change them.
  v1::UploadBatch rows;
  for (const std::int64_t send : {kMax, kMin, std::int64_t{-1}, std::int64_t{1}, kMax}) {
    v1::ProbeResult r = Row(1, send);
    r.set_app_send_ns(kMin);
    r.set_nic_send_ns(kMax);
    r.set_nic_recv_ns(-7);
    r.set_app_recv_ns(send);  // offset 0, present
    r.set_timestamp_error_ns(kMin);
    *rows.add_results() = r;
  }
  const v1::UploadBatch back = RoundTrip(rows);
  ASSERT_EQ(back.results_size(), rows.results_size());
  for (int i = 0; i < rows.results_size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(back.results(i), rows.results(i))) << "result " << i;
  }
}

TEST(result_columns, ColumnsFollowTheRowsABatchAlreadyHolds) {
  v1::UploadBatch batch;
  *batch.add_results() = Row(1, 1'000'000);
  v1::UploadBatch later;
  *later.add_results() = Row(2, 2'000'000);
  *later.add_results() = Row(3, 3'000'000);
  std::int64_t previous = 0;
  AppendRowsToColumns(later.results(), *batch.mutable_result_columns(), previous);
  EXPECT_EQ(ResultCount(batch), 3U);
  EXPECT_EQ(previous, 3'000'000);
  ASSERT_FALSE(ExpandResultColumns(batch, 3).has_value());
  ASSERT_EQ(batch.results_size(), 3);
  EXPECT_EQ(batch.results(0).sequence(), 1U);
  EXPECT_EQ(batch.results(2).sequence(), 3U);
  EXPECT_EQ(batch.results(2).send_time_ns(), 3'000'000);
}

TEST(result_columns, AColumnOfAnotherLengthIsRefusedByName) {
  v1::UploadBatch rows;
  *rows.add_results() = Row(1, 5'000);
  *rows.add_results() = Row(2, 6'000);
  v1::UploadBatch batch;
  std::int64_t previous = 0;
  AppendRowsToColumns(rows.results(), *batch.mutable_result_columns(), previous);
  batch.mutable_result_columns()->add_nic_recv_offset_ns(9);
  *batch.add_results() = Row(9, 1'000);
  const auto error = ExpandResultColumns(batch, 100);
  ASSERT_TRUE(error.has_value());
  EXPECT_FALSE(error->too_many);
  EXPECT_NE(error->message.find("nic_recv_offset_ns holds 3 entries, src_nic 2"), std::string::npos)
      << error->message;
  // Nothing accepted is lost, nothing half-expanded is added.
  EXPECT_EQ(batch.results_size(), 1);
}

TEST(result_columns, RowsAndColumnsTogetherAreHeldToTheLimit) {
  v1::UploadBatch rows;
  for (std::uint64_t i = 0; i < 3; ++i) *rows.add_results() = Row(i, 1'000 + i);
  v1::UploadBatch batch;
  *batch.add_results() = Row(7, 1);
  std::int64_t previous = 0;
  AppendRowsToColumns(rows.results(), *batch.mutable_result_columns(), previous);
  const auto error = ExpandResultColumns(batch, 3);
  ASSERT_TRUE(error.has_value());
  EXPECT_TRUE(error->too_many);
  EXPECT_NE(error->message.find("holds 4 results (limit 3)"), std::string::npos) << error->message;
  EXPECT_FALSE(ExpandResultColumns(batch, 4).has_value());
  EXPECT_EQ(batch.results_size(), 4);
}

TEST(result_columns, UnknownFlagBitsAreIgnoredAndUnknownSourcesReadAsUnspecified) {
  v1::UploadBatch rows;
  *rows.add_results() = Row(1, 10'000);
  v1::UploadBatch batch;
  std::int64_t previous = 0;
  AppendRowsToColumns(rows.results(), *batch.mutable_result_columns(), previous);
  v1::ProbeResultColumns& c = *batch.mutable_result_columns();
  // A later agent's bit 20, and a source 7 this schema does not know.
  c.set_flags(0, (c.flags(0) & ~kSendSourceMask) | 7u | (1u << 20));
  ASSERT_FALSE(ExpandResultColumns(batch, 10).has_value());
  ASSERT_EQ(batch.results_size(), 1);
  EXPECT_EQ(batch.results(0).send_timestamp_source(), v1::TIMESTAMP_SOURCE_UNSPECIFIED);
  EXPECT_EQ(batch.results(0).recv_timestamp_source(), v1::TIMESTAMP_SOURCE_HARDWARE);
  EXPECT_EQ(batch.results(0).nic_recv_ns(), 10'000 + 19'000);
}

TEST(result_columns, ABatchWithoutColumnsIsLeftAlone) {
  v1::UploadBatch batch;
  *batch.add_results() = Row(1, 10);
  const std::string before = batch.SerializeAsString();
  EXPECT_FALSE(ExpandResultColumns(batch, 0).has_value());  // not even the limit is read
  EXPECT_EQ(batch.SerializeAsString(), before);
}

TEST(result_columns, ColumnsTakeUnderHalfTheBytesOfRows) {
  v1::UploadBatch rows;
  std::int64_t t = 1'700'000'000'000'000'000;
  for (std::uint64_t i = 0; i < 1000; ++i) *rows.add_results() = Row(100'000 + i, t += 1'250'000);
  v1::UploadBatch columns;
  std::int64_t previous = 0;
  AppendRowsToColumns(rows.results(), *columns.mutable_result_columns(), previous);
  EXPECT_LT(columns.ByteSizeLong() * 2, rows.ByteSizeLong())
      << columns.ByteSizeLong() << " vs " << rows.ByteSizeLong();
}

}  // namespace
}  // namespace hostmesh::wire
