#pragma once

// UploadBatch.result_columns (ingest.proto ProbeResultColumns) back into
// ProbeResult messages. Pure. The analyzer expands every batch it is sent
// before validating it; an agent expands its own batches for an analyzer that
// does not take columns (HelloReply.takes_result_columns false).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::wire {

// ProbeResultColumns.flags.
inline constexpr std::uint32_t kSendSourceMask = 0x7;
inline constexpr int kRecvSourceShift = 3;
inline constexpr std::uint32_t kTimeoutBit = 1u << 6;
inline constexpr std::uint32_t kSendFailedBit = 1u << 7;
inline constexpr std::uint32_t kAppSendPresent = 1u << 8;
inline constexpr std::uint32_t kNicSendPresent = 1u << 9;
inline constexpr std::uint32_t kNicRecvPresent = 1u << 10;
inline constexpr std::uint32_t kAppRecvPresent = 1u << 11;

// The encoder's arithmetic, shared by every writer of columns. Differences
// wrap (two's complement) and the decoder's sums unwrap them, so every int64
// goes through unchanged (the validator judges the values after).
inline std::int64_t WireDifference(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
// A stamp of 0 is absent: offset 0, its flag clear.
inline std::int64_t StampOffset(std::int64_t stamp, std::int64_t send) {
  return stamp == 0 ? 0 : WireDifference(stamp, send);
}
// One result's values, as every writer of columns hands them over.
struct ColumnEntry {
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

// Appends `e` to `out`; `previous_send_ns` is the last send_time_ns appended
// (0 for empty columns) and becomes e's. Inline: the agent's probe loop calls
// it once per result.
inline void AppendEntry(const ColumnEntry& e, v1::ProbeResultColumns& out,
                        std::int64_t& previous_send_ns) {
  out.add_src_nic(e.src_nic);
  out.add_dst_nic(e.dst_nic);
  out.add_src_port(e.src_port);
  out.add_dst_port(e.dst_port);
  out.add_sequence(e.sequence);
  out.add_send_time_delta_ns(WireDifference(e.send_time_ns, previous_send_ns));
  previous_send_ns = e.send_time_ns;
  out.add_app_send_offset_ns(StampOffset(e.stamps[0], e.send_time_ns));
  out.add_nic_send_offset_ns(StampOffset(e.stamps[1], e.send_time_ns));
  out.add_nic_recv_offset_ns(StampOffset(e.stamps[2], e.send_time_ns));
  out.add_app_recv_offset_ns(StampOffset(e.stamps[3], e.send_time_ns));
  std::uint32_t flags =
      (e.send_source & kSendSourceMask) | ((e.recv_source & kSendSourceMask) << kRecvSourceShift);
  if (e.timeout) flags |= kTimeoutBit;
  if (e.send_failed) flags |= kSendFailedBit;
  for (int i = 0; i < 4; ++i) {
    if (e.stamps[i] != 0) flags |= kAppSendPresent << i;
  }
  out.add_flags(flags);
  out.add_payload_bytes(e.payload_bytes);
  out.add_timestamp_error_ns(e.timestamp_error_ns);
}

// Results in the batch, rows and columns together (the columns by src_nic).
std::size_t ResultCount(const v1::UploadBatch& batch);

// Appends the columns' results to batch.results, in order, and clears the
// columns. Sizes are checked before anything is walked: every column must
// hold as many entries as src_nic, and the batch at most `max_results`
// results in all. On error (what is wrong, naming the column and entry) the
// batch's results are as they were.
struct ExpandError {
  bool too_many = false;  // over max_results (else a malformed column)
  std::string message;
};
std::optional<ExpandError> ExpandResultColumns(v1::UploadBatch& batch, std::size_t max_results);

// The inverse, for tests, benchmarks and fuzz seeds that hold rows: appends
// `rows` to `out`, continuing its send_time chain from `previous_send_ns`
// (the last send_time_ns appended, 0 for empty columns).
void AppendRowsToColumns(const google::protobuf::RepeatedPtrField<v1::ProbeResult>& rows,
                         v1::ProbeResultColumns& out, std::int64_t& previous_send_ns);

}  // namespace hostmesh::wire
