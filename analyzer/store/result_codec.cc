#include "analyzer/store/result_codec.h"

#include "analyzer/store/chunk_codec.h"
#include "common/net/roce.h"
#include "proto/wire/varint.h"

namespace hostmesh::analyzer::store {
namespace {

constexpr char kMarker = 0x00;  // never the first byte of a delimited chunk (see below)
constexpr char kCompactVersion = 0x02;
constexpr std::uint32_t kMaxNic = 32;
constexpr std::uint32_t kDefaultDstPort = net::kRoceV2Port;

enum Flag : std::uint32_t {
  kTimeout = 1u << 0,
  // bits 1-2: send timestamp source, bits 3-4: receive timestamp source
  kT1 = 1u << 5,
  kT2 = 1u << 6,
  kT3 = 1u << 7,
  kT4 = 1u << 8,
  kError = 1u << 9,
  kPayload = 1u << 10,  // payload_bytes differs from the previous result's
  kDstPort = 1u << 11,  // dst_port differs from the previous result's
  kSendFailed = 1u << 12,
};
constexpr int kFlagBits = 13;
constexpr int kSendSourceShift = 1;
constexpr int kRecvSourceShift = 3;
constexpr std::uint32_t kSourceMask = 3;

// Results are written through a cursor into space reserved up front (no
// per-byte capacity checks): this runs for every result at fleet rate.
constexpr std::size_t kMaxResultBytes = 96;  // flags 2, nics 2, ports 7, 7 deltas 70, payload 5

void PutVarint(char*& out, std::uint64_t v) {
  out = wire::PutVarint(v, out);
}
// Differences wrap in unsigned arithmetic, so any two int64 values round-trip.
void PutDelta(char*& out, std::uint64_t value, std::uint64_t base) {
  PutVarint(out, wire::ZigZag(static_cast<std::int64_t>(value - base)));
}

bool GetVarint(std::string_view& in, std::uint64_t& v) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(in.data());
  const bool ok = wire::GetVarint(p, p + in.size(), v) == wire::VarintRead::kOk;
  in.remove_prefix(static_cast<std::size_t>(p - reinterpret_cast<const std::uint8_t*>(in.data())));
  return ok;
}
bool GetDelta(std::string_view& in, std::uint64_t base, std::uint64_t& value) {
  std::uint64_t z = 0;
  if (!GetVarint(in, z)) return false;
  value = base + static_cast<std::uint64_t>(wire::UnZigZag(z));
  return true;
}

bool FitsCompact(const v1::ProbeResult& r) {
  static const google::protobuf::Reflection* const reflection = v1::ProbeResult::GetReflection();
  return r.src_nic() < kMaxNic && r.dst_nic() < kMaxNic && r.src_port() <= 0xffff &&
         static_cast<std::uint32_t>(r.send_timestamp_source()) <= kSourceMask &&
         static_cast<std::uint32_t>(r.recv_timestamp_source()) <= kSourceMask &&
         reflection->GetUnknownFields(r).empty();
}

std::uint64_t U(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

}  // namespace

void EncodeResultChunk(std::span<const v1::ProbeResult* const> results, std::string& out) {
  for (const v1::ProbeResult* r : results) {
    if (!FitsCompact(*r)) {
      const std::size_t first = out.size();
      for (const v1::ProbeResult* each : results) AppendDelimited(out, *each);
      // A result with every field at its default serializes to nothing, so
      // its length byte is 0x00, the compact marker: followed by a 2-byte
      // result the chunk would read as compact. Its length is written as the
      // two-byte varint 0x80 0x00 instead (zero to every reader).
      if (out.size() > first && out[first] == kMarker) out.insert(first, 1, '\x80');
      return;
    }
  }
  const std::size_t start = out.size();
  out.resize(start + 2 + 10 + results.size() * kMaxResultBytes);
  char* cursor = out.data() + start;
  *cursor++ = kMarker;
  *cursor++ = kCompactVersion;
  PutVarint(cursor, results.size());
  std::uint64_t prev_send = 0;
  std::uint64_t prev_seq[kMaxNic] = {};
  std::uint32_t prev_dst_port = kDefaultDstPort;
  std::uint32_t prev_payload = 0;
  for (const v1::ProbeResult* p : results) {
    const v1::ProbeResult& r = *p;
    std::uint32_t flags =
        (r.timeout() ? std::uint32_t{kTimeout} : 0u) |
        (r.send_failed() ? std::uint32_t{kSendFailed} : 0u) |
        (static_cast<std::uint32_t>(r.send_timestamp_source()) << kSendSourceShift) |
        (static_cast<std::uint32_t>(r.recv_timestamp_source()) << kRecvSourceShift);
    if (r.app_send_ns() != 0) flags |= kT1;
    if (r.nic_send_ns() != 0) flags |= kT2;
    if (r.nic_recv_ns() != 0) flags |= kT3;
    if (r.app_recv_ns() != 0) flags |= kT4;
    if (r.timestamp_error_ns() != 0) flags |= kError;
    if (r.payload_bytes() != prev_payload) flags |= kPayload;
    if (r.dst_port() != prev_dst_port) flags |= kDstPort;
    PutVarint(cursor, flags);
    PutVarint(cursor, r.src_nic());
    PutVarint(cursor, r.dst_nic());
    *cursor++ = static_cast<char>(r.src_port() & 0xff);
    *cursor++ = static_cast<char>(r.src_port() >> 8);
    if (flags & kDstPort) PutVarint(cursor, r.dst_port());
    PutDelta(cursor, r.sequence(), prev_seq[r.src_nic()]);
    const std::uint64_t send = U(r.send_time_ns());
    PutDelta(cursor, send, prev_send);
    // Each timestamp from the last one present before it (send time first).
    std::uint64_t base = send;
    for (const auto& [flag, value] :
         {std::pair{kT1, r.app_send_ns()}, std::pair{kT2, r.nic_send_ns()},
          std::pair{kT3, r.nic_recv_ns()}, std::pair{kT4, r.app_recv_ns()}}) {
      if ((flags & flag) == 0) continue;
      PutDelta(cursor, U(value), base);
      base = U(value);
    }
    if (flags & kError) PutDelta(cursor, U(r.timestamp_error_ns()), 0);
    if (flags & kPayload) PutVarint(cursor, r.payload_bytes());
    prev_seq[r.src_nic()] = r.sequence();
    prev_send = send;
    prev_dst_port = r.dst_port();
    prev_payload = r.payload_bytes();
  }
  out.resize(static_cast<std::size_t>(cursor - out.data()));
}

ResultChunkReader::ResultChunkReader(std::string_view chunk) : in_(chunk) {
  if (in_.size() >= 2 && in_[0] == kMarker && in_[1] == kCompactVersion) {
    compact_ = true;
    in_.remove_prefix(2);
    corrupt_ = !GetVarint(in_, remaining_);
  }
}

bool ResultChunkReader::Next(v1::ProbeResult& out) {
  if (corrupt_) return false;
  if (!compact_) {
    if (in_.empty()) return false;
    corrupt_ = !ReadDelimited(in_, out);
    return !corrupt_;
  }
  if (remaining_ == 0) {
    corrupt_ = !in_.empty();  // bytes after the last result
    return false;
  }
  --remaining_;
  corrupt_ = !NextCompact(out);
  return !corrupt_;
}

bool ResultChunkReader::NextCompact(v1::ProbeResult& out) {
  out.Clear();
  std::uint64_t flags = 0, src = 0, dst = 0;
  if (!GetVarint(in_, flags) || !GetVarint(in_, src) || !GetVarint(in_, dst)) return false;
  if (flags >> kFlagBits != 0) return false;  // no flag this version knows
  if (src >= kMaxNic || dst >= kMaxNic || in_.size() < 2) return false;
  out.set_timeout((flags & kTimeout) != 0);
  out.set_send_failed((flags & kSendFailed) != 0);
  out.set_send_timestamp_source(
      static_cast<v1::TimestampSource>((flags >> kSendSourceShift) & kSourceMask));
  out.set_recv_timestamp_source(
      static_cast<v1::TimestampSource>((flags >> kRecvSourceShift) & kSourceMask));
  out.set_src_nic(static_cast<std::uint32_t>(src));
  out.set_dst_nic(static_cast<std::uint32_t>(dst));
  out.set_src_port(static_cast<std::uint32_t>(static_cast<unsigned char>(in_[0])) |
                   (static_cast<std::uint32_t>(static_cast<unsigned char>(in_[1])) << 8));
  in_.remove_prefix(2);
  if (flags & kDstPort) {
    std::uint64_t port = 0;
    if (!GetVarint(in_, port) || port > 0xffffffffu) return false;
    prev_dst_port_ = static_cast<std::uint32_t>(port);
  }
  out.set_dst_port(prev_dst_port_);
  std::uint64_t seq = 0, send = 0;
  if (!GetDelta(in_, prev_seq_[src], seq) || !GetDelta(in_, prev_send_, send)) return false;
  prev_seq_[src] = seq;
  prev_send_ = send;
  out.set_sequence(seq);
  out.set_send_time_ns(static_cast<std::int64_t>(send));
  std::uint64_t base = send;
  using Setter = void (v1::ProbeResult::*)(std::int64_t);
  for (const auto& [flag, set] :
       {std::pair<Flag, Setter>{kT1, &v1::ProbeResult::set_app_send_ns},
        std::pair<Flag, Setter>{kT2, &v1::ProbeResult::set_nic_send_ns},
        std::pair<Flag, Setter>{kT3, &v1::ProbeResult::set_nic_recv_ns},
        std::pair<Flag, Setter>{kT4, &v1::ProbeResult::set_app_recv_ns}}) {
    if ((flags & flag) == 0) continue;
    if (!GetDelta(in_, base, base)) return false;
    (out.*set)(static_cast<std::int64_t>(base));
  }
  if (flags & kError) {
    std::uint64_t error = 0;
    if (!GetDelta(in_, 0, error)) return false;
    out.set_timestamp_error_ns(static_cast<std::int64_t>(error));
  }
  if (flags & kPayload) {
    std::uint64_t payload = 0;
    if (!GetVarint(in_, payload) || payload > 0xffffffffu) return false;
    prev_payload_ = static_cast<std::uint32_t>(payload);
  }
  out.set_payload_bytes(prev_payload_);
  return true;
}

}  // namespace hostmesh::analyzer::store
