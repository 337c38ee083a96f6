#include "proto/wire/packed_results.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>

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

// Packs `rows` into a batch of their own.
v1::UploadBatch Packed(const v1::UploadBatch& rows) {
  v1::UploadBatch packed;
  std::int64_t previous = 0;
  AppendRowsToPacked(rows.results(), *packed.mutable_packed_results(), previous);
  return packed;
}

// Rows packed and back, over the wire, by the reader the analyzer runs.
v1::UploadBatch RoundTrip(const v1::UploadBatch& rows) {
  v1::UploadBatch wire;
  EXPECT_TRUE(wire.ParseFromString(Packed(rows).SerializeAsString()));
  EXPECT_FALSE(ExpandPackedResults(wire, 100'000).has_value());
  EXPECT_FALSE(wire.has_packed_results());
  return wire;
}

TEST(packed_results, EveryFieldOfEveryResultComesBackAsItWas) {
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

TEST(packed_results, ExtremeTimesGoThroughUnchanged) {
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

TEST(packed_results, VarintsOfEveryLengthReadBack) {
  // Each side of every varint length, in a 64-bit field and a 32-bit one.
  v1::UploadBatch rows;
  for (int bits = 0; bits <= 64; bits += 7) {
    for (const std::uint64_t v : {bits == 0 ? 0 : (std::uint64_t{1} << (bits < 64 ? bits : 63)) - 1,
                                  bits < 64 ? std::uint64_t{1} << bits : UINT64_MAX}) {
      v1::ProbeResult r = Row(v, 1'000);
      r.set_sequence(v);
      r.set_payload_bytes(static_cast<std::uint32_t>(v));
      *rows.add_results() = r;
    }
  }
  const v1::UploadBatch back = RoundTrip(rows);
  ASSERT_EQ(back.results_size(), rows.results_size());
  for (int i = 0; i < rows.results_size(); ++i) {
    EXPECT_EQ(back.results(i).sequence(), rows.results(i).sequence());
    EXPECT_EQ(back.results(i).payload_bytes(), rows.results(i).payload_bytes());
  }
}

TEST(packed_results, RecordsFollowTheMessagesABatchAlreadyHolds) {
  v1::UploadBatch batch;
  *batch.add_results() = Row(1, 1'000'000);
  v1::UploadBatch later;
  *later.add_results() = Row(2, 2'000'000);
  *later.add_results() = Row(3, 3'000'000);
  std::int64_t previous = 0;
  AppendRowsToPacked(later.results(), *batch.mutable_packed_results(), previous);
  EXPECT_EQ(ResultCount(batch), 3U);
  EXPECT_EQ(previous, 3'000'000);
  ASSERT_FALSE(ExpandPackedResults(batch, 3).has_value());
  ASSERT_EQ(batch.results_size(), 3);
  EXPECT_EQ(batch.results(0).sequence(), 1U);
  EXPECT_EQ(batch.results(2).sequence(), 3U);
  EXPECT_EQ(batch.results(2).send_time_ns(), 3'000'000);
}

// Expands `batch` and returns the error's message ("" when it expanded).
std::string WhyRefused(v1::UploadBatch batch, std::size_t limit = 100) {
  const auto error = ExpandPackedResults(batch, limit);
  return error ? error->message : "";
}

TEST(packed_results, ATruncatedOrPaddedRecordIsRefusedByRecordAndField) {
  v1::UploadBatch rows;
  *rows.add_results() = Row(1, 5'000);
  *rows.add_results() = Row(2, 6'000);
  const v1::UploadBatch good = Packed(rows);
  v1::UploadBatch cut = good;
  std::string& records = *cut.mutable_packed_results()->mutable_records();
  records.pop_back();  // the second record's timestamp_error
  EXPECT_EQ(WhyRefused(cut), "packed_results: record 1: timestamp_error ends inside the record");
  v1::UploadBatch padded = good;
  padded.mutable_packed_results()->mutable_records()->push_back('\0');
  EXPECT_EQ(WhyRefused(padded), "packed_results: 1 bytes after the last of 2 records");
  v1::UploadBatch long_count = good;
  long_count.mutable_packed_results()->set_count(3);
  EXPECT_EQ(WhyRefused(long_count), "packed_results: record 2: src_nic ends inside the record");
  // A count the bytes could never hold is refused before any is read.
  long_count.mutable_packed_results()->set_count(1'000);
  EXPECT_NE(WhyRefused(long_count, 100'000).find("bytes cannot hold 1000 records"),
            std::string::npos)
      << WhyRefused(long_count, 100'000);
  // Nothing half-read is left behind: the batch's messages are as they were.
  *cut.add_results() = Row(9, 1'000);
  EXPECT_TRUE(ExpandPackedResults(cut, 100).has_value());
  ASSERT_EQ(cut.results_size(), 1);
  EXPECT_EQ(cut.results(0).sequence(), 9U);
}

TEST(packed_results, VarintsWiderThanTheirFieldsAreRefused) {
  // src_nic of 2^32, then a sequence of eleven bytes.
  v1::UploadBatch batch;
  v1::PackedResults& packed = *batch.mutable_packed_results();
  packed.set_format(kPackedResultsFormat);
  packed.set_count(1);
  packed.set_records(std::string("\x80\x80\x80\x80\x10", 5) + std::string(20, '\x01'));
  EXPECT_EQ(WhyRefused(batch), "packed_results: record 0: src_nic is over 32 bits in the record");
  packed.set_records(std::string(4, '\x01') + std::string(10, '\xff') + std::string(20, '\x01'));
  EXPECT_EQ(WhyRefused(batch), "packed_results: record 0: sequence is over 64 bits in the record");
}

TEST(packed_results, AnUnknownFormatIsRefused) {
  v1::UploadBatch rows;
  *rows.add_results() = Row(1, 5'000);
  v1::UploadBatch batch = Packed(rows);
  batch.mutable_packed_results()->set_format(2);
  EXPECT_EQ(WhyRefused(batch), "packed_results: format 2 is not one this reader knows (1)");
}

TEST(packed_results, MessagesAndRecordsTogetherAreHeldToTheLimit) {
  v1::UploadBatch rows;
  for (std::uint64_t i = 0; i < 3; ++i) *rows.add_results() = Row(i, 1'000 + i);
  v1::UploadBatch batch = Packed(rows);
  *batch.add_results() = Row(7, 1);
  const auto error = ExpandPackedResults(batch, 3);
  ASSERT_TRUE(error.has_value());
  EXPECT_TRUE(error->too_many);
  EXPECT_EQ(error->message, "batch holds 4 results (limit 3)");
  EXPECT_FALSE(ExpandPackedResults(batch, 4).has_value());
  EXPECT_EQ(batch.results_size(), 4);
}

// A record written varint by varint.
std::string Varints(std::initializer_list<std::uint64_t> values) {
  std::string out;
  char buffer[10];
  for (const std::uint64_t v : values) out.append(buffer, PutVarint(v, buffer));
  return out;
}

TEST(packed_results, UnknownFlagBitsAreIgnoredAndUnknownSourcesReadAsUnspecified) {
  // A later agent's bit 20, a send source of 7 this schema does not know, and
  // two stamps of four.
  const std::uint64_t flags = 7 | (v1::TIMESTAMP_SOURCE_HARDWARE << kRecvSourceShift) |
                              kFirstStampPresent | (kFirstStampPresent << 2) | (1u << 20);
  v1::UploadBatch batch;
  v1::PackedResults& packed = *batch.mutable_packed_results();
  packed.set_format(kPackedResultsFormat);
  packed.set_count(1);
  packed.set_records(Varints({1, 4, 49153, 4791, 1, ZigZag(10'000), flags, ZigZag(1'200),
                              ZigZag(19'000), 64, ZigZag(-150)}));
  ASSERT_FALSE(ExpandPackedResults(batch, 10).has_value()) << WhyRefused(batch);
  ASSERT_EQ(batch.results_size(), 1);
  const v1::ProbeResult& r = batch.results(0);
  EXPECT_EQ(r.send_timestamp_source(), v1::TIMESTAMP_SOURCE_UNSPECIFIED);
  EXPECT_EQ(r.recv_timestamp_source(), v1::TIMESTAMP_SOURCE_HARDWARE);
  EXPECT_EQ(r.send_time_ns(), 10'000);
  EXPECT_EQ(r.app_send_ns(), 11'200);
  EXPECT_EQ(r.nic_send_ns(), 0);
  EXPECT_EQ(r.nic_recv_ns(), 29'000);
  EXPECT_EQ(r.app_recv_ns(), 0);
  EXPECT_EQ(r.src_port(), 49153U);
  EXPECT_EQ(r.timestamp_error_ns(), -150);
}

TEST(packed_results, ABatchWithoutPackedResultsIsLeftAlone) {
  v1::UploadBatch batch;
  *batch.add_results() = Row(1, 10);
  const std::string before = batch.SerializeAsString();
  EXPECT_FALSE(ExpandPackedResults(batch, 0).has_value());  // not even the limit is read
  EXPECT_EQ(batch.SerializeAsString(), before);
}

TEST(packed_results, RecordsTakeUnderHalfTheBytesOfMessages) {
  v1::UploadBatch rows;
  std::int64_t t = 1'700'000'000'000'000'000;
  for (std::uint64_t i = 0; i < 1000; ++i) *rows.add_results() = Row(100'000 + i, t += 1'250'000);
  const v1::UploadBatch packed = Packed(rows);
  EXPECT_LT(packed.ByteSizeLong() * 2, rows.ByteSizeLong())
      << packed.ByteSizeLong() << " vs " << rows.ByteSizeLong();
}

}  // namespace
}  // namespace hostmesh::wire
