#include "proto/wire/result_columns.h"

#include <array>
#include <utility>

namespace hostmesh::wire {
namespace {

using Columns = v1::ProbeResultColumns;

// Every column's name and length, to check against src_nic's.
std::array<std::pair<const char*, int>, 12> OtherColumns(const Columns& c) {
  return {{{"dst_nic", c.dst_nic_size()},
           {"src_port", c.src_port_size()},
           {"dst_port", c.dst_port_size()},
           {"sequence", c.sequence_size()},
           {"send_time_delta_ns", c.send_time_delta_ns_size()},
           {"app_send_offset_ns", c.app_send_offset_ns_size()},
           {"nic_send_offset_ns", c.nic_send_offset_ns_size()},
           {"nic_recv_offset_ns", c.nic_recv_offset_ns_size()},
           {"app_recv_offset_ns", c.app_recv_offset_ns_size()},
           {"flags", c.flags_size()},
           {"payload_bytes", c.payload_bytes_size()},
           {"timestamp_error_ns", c.timestamp_error_ns_size()}}};
}

v1::TimestampSource Source(std::uint32_t bits) {
  // An unknown source reads as unspecified, as an unknown enum value would.
  return v1::TimestampSource_IsValid(static_cast<int>(bits))
             ? static_cast<v1::TimestampSource>(bits)
             : v1::TIMESTAMP_SOURCE_UNSPECIFIED;
}

// Two's-complement sums and differences: the decoder undoes exactly what the
// encoder did, for every int64 (the validator judges the values after).
std::int64_t Add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

std::int64_t Stamp(bool present, std::int64_t send, std::int64_t offset) {
  return present ? Add(send, offset) : 0;
}

}  // namespace

std::size_t ResultCount(const v1::UploadBatch& batch) {
  return static_cast<std::size_t>(batch.results_size()) +
         static_cast<std::size_t>(batch.result_columns().src_nic_size());
}

std::optional<ExpandError> ExpandResultColumns(v1::UploadBatch& batch, std::size_t max_results) {
  if (!batch.has_result_columns()) return std::nullopt;
  const Columns& c = batch.result_columns();
  const int n = c.src_nic_size();
  for (const auto& [name, size] : OtherColumns(c)) {
    if (size != n) {
      return ExpandError{false, "result_columns." + std::string(name) + " holds " +
                                    std::to_string(size) + " entries, src_nic " +
                                    std::to_string(n) + " (every column holds one per result)"};
    }
  }
  if (ResultCount(batch) > max_results) {
    return ExpandError{true, "batch holds " + std::to_string(ResultCount(batch)) +
                                 " results (limit " + std::to_string(max_results) + ")"};
  }
  const int first = batch.results_size();
  auto& rows = *batch.mutable_results();
  rows.Reserve(first + n);
  std::int64_t send = 0;
  for (int i = 0; i < n; ++i) {
    const std::uint32_t flags = c.flags(i);
    send = Add(send, c.send_time_delta_ns(i));
    v1::ProbeResult& r = *rows.Add();
    r.set_src_nic(c.src_nic(i));
    r.set_dst_nic(c.dst_nic(i));
    r.set_src_port(c.src_port(i));
    r.set_dst_port(c.dst_port(i));
    r.set_sequence(c.sequence(i));
    r.set_send_time_ns(send);
    r.set_app_send_ns(Stamp((flags & kAppSendPresent) != 0, send, c.app_send_offset_ns(i)));
    r.set_nic_send_ns(Stamp((flags & kNicSendPresent) != 0, send, c.nic_send_offset_ns(i)));
    r.set_nic_recv_ns(Stamp((flags & kNicRecvPresent) != 0, send, c.nic_recv_offset_ns(i)));
    r.set_app_recv_ns(Stamp((flags & kAppRecvPresent) != 0, send, c.app_recv_offset_ns(i)));
    r.set_send_timestamp_source(Source(flags & kSendSourceMask));
    r.set_recv_timestamp_source(Source((flags >> kRecvSourceShift) & kSendSourceMask));
    r.set_timeout((flags & kTimeoutBit) != 0);
    r.set_send_failed((flags & kSendFailedBit) != 0);
    r.set_payload_bytes(c.payload_bytes(i));
    r.set_timestamp_error_ns(c.timestamp_error_ns(i));
  }
  batch.clear_result_columns();
  return std::nullopt;
}

void AppendRowsToColumns(const google::protobuf::RepeatedPtrField<v1::ProbeResult>& rows,
                         v1::ProbeResultColumns& out, std::int64_t& previous_send_ns) {
  for (const v1::ProbeResult& r : rows) {
    ColumnEntry e;
    e.src_nic = r.src_nic();
    e.dst_nic = r.dst_nic();
    e.src_port = r.src_port();
    e.dst_port = r.dst_port();
    e.sequence = r.sequence();
    e.send_time_ns = r.send_time_ns();
    e.stamps[0] = r.app_send_ns();
    e.stamps[1] = r.nic_send_ns();
    e.stamps[2] = r.nic_recv_ns();
    e.stamps[3] = r.app_recv_ns();
    e.send_source = static_cast<std::uint32_t>(r.send_timestamp_source());
    e.recv_source = static_cast<std::uint32_t>(r.recv_timestamp_source());
    e.timeout = r.timeout();
    e.send_failed = r.send_failed();
    e.payload_bytes = r.payload_bytes();
    e.timestamp_error_ns = r.timestamp_error_ns();
    AppendEntry(e, out, previous_send_ns);
  }
}

}  // namespace hostmesh::wire
