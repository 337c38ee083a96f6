#include "proto/wire/packed_results.h"

namespace hostmesh::wire {
namespace {

// The fewest bytes a record takes: 9 varints that are always there.
constexpr std::size_t kMinRecordBytes = 9;

v1::TimestampSource Source(std::uint32_t bits) {
  // An unknown source reads as unspecified, as an unknown enum value would.
  return v1::TimestampSource_IsValid(static_cast<int>(bits))
             ? static_cast<v1::TimestampSource>(bits)
             : v1::TIMESTAMP_SOURCE_UNSPECIFIED;
}

// Reads varints off the records, remembering what failed.
class Reader {
 public:
  explicit Reader(const std::string& bytes)
      : p_(reinterpret_cast<const std::uint8_t*>(bytes.data())), end_(p_ + bytes.size()) {}

  // The next varint; false (and `error` names `field`) past the end or over
  // 64 bits.
  bool Next(const char* field, std::uint64_t& out) {
    switch (GetVarint(p_, end_, out)) {
      case VarintRead::kOk:
        return true;
      case VarintRead::kTruncated:
        return Fail(field, "ends inside");
      case VarintRead::kTooLong:
        break;
    }
    return Fail(field, "is over 64 bits in");
  }
  bool Next32(const char* field, std::uint32_t& out) {
    std::uint64_t v = 0;
    if (!Next(field, v)) return false;
    if (v > UINT32_MAX) return Fail(field, "is over 32 bits in");
    out = static_cast<std::uint32_t>(v);
    return true;
  }
  bool NextSigned(const char* field, std::int64_t& out) {
    std::uint64_t v = 0;
    if (!Next(field, v)) return false;
    out = UnZigZag(v);
    return true;
  }

  std::size_t left() const { return static_cast<std::size_t>(end_ - p_); }
  const std::string& error() const { return error_; }

 private:
  bool Fail(const char* field, const char* what) {
    error_ = std::string(field) + " " + what + " the record";
    return false;
  }
  const std::uint8_t* p_;
  const std::uint8_t* end_;
  std::string error_;
};

// One record into `r`; false on the first bad varint.
bool ReadRecord(Reader& in, std::int64_t& send, v1::ProbeResult& r) {
  std::uint32_t u32 = 0;
  std::uint64_t u64 = 0;
  std::int64_t s64 = 0;
  if (!in.Next32("src_nic", u32)) return false;
  r.set_src_nic(u32);
  if (!in.Next32("dst_nic", u32)) return false;
  r.set_dst_nic(u32);
  if (!in.Next32("src_port", u32)) return false;
  r.set_src_port(u32);
  if (!in.Next32("dst_port", u32)) return false;
  r.set_dst_port(u32);
  if (!in.Next("sequence", u64)) return false;
  r.set_sequence(u64);
  if (!in.NextSigned("send_time", s64)) return false;
  send = WrappingSum(send, s64);
  r.set_send_time_ns(send);
  std::uint32_t flags = 0;
  if (!in.Next32("flags", flags)) return false;
  r.set_send_timestamp_source(Source(flags & kSourceMask));
  r.set_recv_timestamp_source(Source((flags >> kRecvSourceShift) & kSourceMask));
  r.set_timeout((flags & kTimeoutBit) != 0);
  r.set_send_failed((flags & kSendFailedBit) != 0);
  static constexpr const char* kStamps[4] = {"app_send", "nic_send", "nic_recv", "app_recv"};
  std::int64_t stamps[4] = {};
  for (int i = 0; i < 4; ++i) {
    if ((flags & (kFirstStampPresent << i)) == 0) continue;
    if (!in.NextSigned(kStamps[i], s64)) return false;
    stamps[i] = WrappingSum(send, s64);
  }
  r.set_app_send_ns(stamps[0]);
  r.set_nic_send_ns(stamps[1]);
  r.set_nic_recv_ns(stamps[2]);
  r.set_app_recv_ns(stamps[3]);
  if (!in.Next32("payload_bytes", u32)) return false;
  r.set_payload_bytes(u32);
  if (!in.NextSigned("timestamp_error", s64)) return false;
  r.set_timestamp_error_ns(s64);
  return true;
}

}  // namespace

std::size_t ResultCount(const v1::UploadBatch& batch) {
  return static_cast<std::size_t>(batch.results_size()) +
         static_cast<std::size_t>(batch.packed_results().count());
}

std::optional<ExpandError> ExpandPackedResults(v1::UploadBatch& batch, std::size_t max_results) {
  if (!batch.has_packed_results()) return std::nullopt;
  const v1::PackedResults& packed = batch.packed_results();
  const auto bad = [](std::string why) {
    return ExpandError{false, "packed_results: " + std::move(why)};
  };
  if (packed.format() != kPackedResultsFormat) {
    return bad("format " + std::to_string(packed.format()) + " is not one this reader knows (" +
               std::to_string(kPackedResultsFormat) + ")");
  }
  if (ResultCount(batch) > max_results) {
    return ExpandError{true, "batch holds " + std::to_string(ResultCount(batch)) +
                                 " results (limit " + std::to_string(max_results) + ")"};
  }
  const std::size_t count = packed.count();
  if (count * kMinRecordBytes > packed.records().size()) {
    return bad(std::to_string(packed.records().size()) + " bytes cannot hold " +
               std::to_string(count) + " records");
  }
  auto& rows = *batch.mutable_results();
  const int first = rows.size();
  rows.Reserve(first + static_cast<int>(count));
  Reader in(packed.records());
  std::int64_t send = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (!ReadRecord(in, send, *rows.Add())) {
      rows.DeleteSubrange(first, rows.size() - first);
      return bad("record " + std::to_string(i) + ": " + in.error());
    }
  }
  if (in.left() != 0) {
    rows.DeleteSubrange(first, rows.size() - first);
    return bad(std::to_string(in.left()) + " bytes after the last of " + std::to_string(count) +
               " records");
  }
  batch.clear_packed_results();
  return std::nullopt;
}

void AppendRowsToPacked(const google::protobuf::RepeatedPtrField<v1::ProbeResult>& rows,
                        v1::PackedResults& out, std::int64_t& previous_send_ns) {
  out.set_format(kPackedResultsFormat);
  std::string& records = *out.mutable_records();
  for (const v1::ProbeResult& r : rows) {
    ResultRecord e;
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
    AppendRecord(e, records, previous_send_ns);
  }
  out.set_count(out.count() + static_cast<std::uint32_t>(rows.size()));
}

}  // namespace hostmesh::wire
