#pragma once

// UploadBatch.packed_results (ingest.proto PackedResults, format 1): the
// agent's writer, and the reader that expands the records into ProbeResult
// messages. Pure. The analyzer expands every batch it is sent before
// validating it; an agent expands its own batches for an analyzer that does
// not read the format (HelloReply.packed_results_format).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "hostmesh/v1/ingest.pb.h"
#include "proto/wire/varint.h"

namespace hostmesh::wire {

inline constexpr std::uint32_t kPackedResultsFormat = 1;

// The flags varint of a record.
inline constexpr std::uint32_t kSourceMask = 0x7;
inline constexpr int kRecvSourceShift = 3;
inline constexpr std::uint32_t kTimeoutBit = 1u << 6;
inline constexpr std::uint32_t kSendFailedBit = 1u << 7;
inline constexpr std::uint32_t kFirstStampPresent = 1u << 8;  // then nic_send, nic_recv, app_recv

// One result's values, as every writer hands them over.
struct ResultRecord {
  std::uint32_t src_nic = 0;
  std::uint32_t dst_nic = 0;
  std::uint32_t src_port = 0;
  std::uint32_t dst_port = 0;
  std::uint64_t sequence = 0;
  std::int64_t send_time_ns = 0;
  std::int64_t stamps[4] = {};    // app_send, nic_send, nic_recv, app_recv; 0 = absent
  std::uint32_t send_source = 0;  // v1::TimestampSource values
  std::uint32_t recv_source = 0;
  bool timeout = false;
  bool send_failed = false;
  std::uint32_t payload_bytes = 0;
  std::int64_t timestamp_error_ns = 0;
};

// A record's largest size: 13 varints of at most 10 bytes.
inline constexpr std::size_t kMaxRecordBytes = 13 * kMaxVarintBytes;

// Writes `r` as a record at `out`, which has room for kMaxRecordBytes, and
// returns its end; `previous_send_ns` is the last record's send_time_ns (0
// before the first) and becomes r's. Inline: the agent's probe loop calls it
// once per result.
inline char* WriteRecord(const ResultRecord& r, char* out, std::int64_t& previous_send_ns) {
  char* p = out;
  p = PutVarint(r.src_nic, p);
  p = PutVarint(r.dst_nic, p);
  p = PutVarint(r.src_port, p);
  p = PutVarint(r.dst_port, p);
  p = PutVarint(r.sequence, p);
  p = PutVarint(ZigZag(WrappingDifference(r.send_time_ns, previous_send_ns)), p);
  previous_send_ns = r.send_time_ns;
  const std::uint32_t flags = (r.send_source & kSourceMask) |
                              ((r.recv_source & kSourceMask) << kRecvSourceShift) |
                              (r.timeout ? kTimeoutBit : 0) | (r.send_failed ? kSendFailedBit : 0) |
                              (r.stamps[0] != 0 ? kFirstStampPresent : 0) |
                              (r.stamps[1] != 0 ? kFirstStampPresent << 1 : 0) |
                              (r.stamps[2] != 0 ? kFirstStampPresent << 2 : 0) |
                              (r.stamps[3] != 0 ? kFirstStampPresent << 3 : 0);
  p = PutVarint(flags, p);
  const auto put_stamp = [&](std::int64_t stamp) {
    if (stamp != 0) p = PutVarint(ZigZag(WrappingDifference(stamp, r.send_time_ns)), p);
  };
  put_stamp(r.stamps[0]);
  put_stamp(r.stamps[1]);
  put_stamp(r.stamps[2]);
  put_stamp(r.stamps[3]);
  p = PutVarint(r.payload_bytes, p);
  return PutVarint(ZigZag(r.timestamp_error_ns), p);
}

// The same appended to `records` (PackedResults.records).
inline void AppendRecord(const ResultRecord& r, std::string& records,
                         std::int64_t& previous_send_ns) {
  char buffer[kMaxRecordBytes];
  const char* end = WriteRecord(r, buffer, previous_send_ns);
  records.append(buffer, static_cast<std::size_t>(end - buffer));
}

// Results in the batch: its messages and its packed count.
std::size_t ResultCount(const v1::UploadBatch& batch);

// Appends the packed records to batch.results, in order, and clears
// packed_results. Checked before anything is walked: the format, the batch's
// results in all against `max_results`, and that the bytes can hold `count`
// records; then every varint against its field's width and the end of the
// bytes. On error (what is wrong, naming the record and field) the batch's
// results are as they were.
struct ExpandError {
  bool too_many = false;  // over max_results (else malformed)
  std::string message;
};
std::optional<ExpandError> ExpandPackedResults(v1::UploadBatch& batch, std::size_t max_results);

// The writer for callers that hold messages (tests, benchmarks, fuzz seeds):
// appends `rows` to `out` (format and count kept up), continuing the send
// time chain from `previous_send_ns`.
void AppendRowsToPacked(const google::protobuf::RepeatedPtrField<v1::ProbeResult>& rows,
                        v1::PackedResults& out, std::int64_t& previous_send_ns);

}  // namespace hostmesh::wire
