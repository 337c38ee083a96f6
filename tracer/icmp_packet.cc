#include "tracer/icmp_packet.h"

#include <algorithm>

namespace hostmesh::tracer {
namespace {

constexpr std::uint8_t kIpProtoIcmp = 1;
constexpr std::uint8_t kIcmpDestUnreachable = 3;
constexpr std::uint8_t kIcmpTimeExceeded = 11;
constexpr std::uint8_t kCodePortUnreachable = 3;
constexpr std::size_t kIcmpHeaderBytes = 8;
constexpr std::size_t kUdpHeaderBytes = 8;

std::uint16_t U16(std::span<const std::uint8_t> b, std::size_t at) {
  return static_cast<std::uint16_t>((b[at] << 8) | b[at + 1]);
}
std::uint32_t U32(std::span<const std::uint8_t> b, std::size_t at) {
  return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) |
         (std::uint32_t{b[at + 2]} << 8) | std::uint32_t{b[at + 3]};
}

// Header length of an IPv4 header at the start of `b`, or 0 when `b` does not
// hold a whole one.
std::size_t Ipv4HeaderBytes(std::span<const std::uint8_t> b) {
  if (b.size() < 20 || (b[0] >> 4) != 4) return 0;
  const std::size_t ihl = std::size_t{b[0] & 0x0Fu} * 4;
  if (ihl < 20 || b.size() < ihl) return 0;
  return ihl;
}

}  // namespace

const char* ToString(ParseStatus status) {
  switch (status) {
    case ParseStatus::kOk:
      return "ok";
    case ParseStatus::kNotIcmp:
      return "not icmp";
    case ParseStatus::kTruncated:
      return "truncated";
    case ParseStatus::kBadChecksum:
      return "bad checksum";
    case ParseStatus::kNotIcmpError:
      return "not an icmp error";
    case ParseStatus::kQuotedNotUdp:
      return "quoted datagram not udp";
  }
  return "?";
}

std::uint16_t InternetChecksum(std::span<const std::uint8_t> bytes) {
  std::uint32_t sum = 0;
  std::size_t i = 0;
  for (; i + 1 < bytes.size(); i += 2) sum += U16(bytes, i);
  if (i < bytes.size()) sum += std::uint32_t{bytes[i]} << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

ParsedIcmp ParseIcmpPacket(std::span<const std::uint8_t> packet) {
  ParsedIcmp out;
  if (packet.empty() || (packet[0] >> 4) != 4) return out;  // kNotIcmp
  const std::size_t ihl = Ipv4HeaderBytes(packet);
  if (ihl == 0) {
    out.status = ParseStatus::kTruncated;
    return out;
  }
  if (packet[9] != kIpProtoIcmp) return out;
  const std::size_t total = U16(packet, 2);
  if (total < ihl + kIcmpHeaderBytes || packet.size() < total) {
    out.status = ParseStatus::kTruncated;
    return out;
  }
  const auto icmp = packet.subspan(ihl, total - ihl);
  const std::uint8_t type = icmp[0];
  const std::uint8_t code = icmp[1];
  if (type != kIcmpTimeExceeded && type != kIcmpDestUnreachable) {
    out.status = ParseStatus::kNotIcmpError;
    return out;
  }
  if (InternetChecksum(icmp) != 0) {
    out.status = ParseStatus::kBadChecksum;
    return out;
  }
  // RFC 4884: a nonzero length (32-bit words) bounds the quote when
  // extensions follow it; zero means the quote runs to the end.
  auto quote = icmp.subspan(kIcmpHeaderBytes);
  if (const std::size_t words = icmp[5]; words != 0) {
    quote = quote.first(std::min(quote.size(), words * 4));
  }
  const std::size_t qihl = Ipv4HeaderBytes(quote);
  if (qihl == 0) {
    out.status = ParseStatus::kTruncated;
    return out;
  }
  const bool first_fragment = (U16(quote, 6) & 0x1FFF) == 0;
  if (quote[9] != kIpProtoUdp || !first_fragment) {
    out.status = ParseStatus::kQuotedNotUdp;
    return out;
  }
  if (quote.size() < qihl + kUdpHeaderBytes) {
    out.status = ParseStatus::kTruncated;
    return out;
  }
  const auto udp = quote.subspan(qihl);
  IcmpError& e = out.error;
  e.responder = Ipv4{U32(packet, 12)};
  e.to = Ipv4{U32(packet, 16)};
  e.type = type;
  e.code = code;
  e.kind = type == kIcmpTimeExceeded      ? IcmpKind::kTimeExceeded
           : code == kCodePortUnreachable ? IcmpKind::kPortUnreachable
                                          : IcmpKind::kOtherUnreachable;
  QuotedUdp& q = e.quoted;
  q.tuple.src = Ipv4{U32(quote, 12)};
  q.tuple.dst = Ipv4{U32(quote, 16)};
  q.tuple.protocol = kIpProtoUdp;
  q.tuple.sport = U16(udp, 0);
  q.tuple.dport = U16(udp, 2);
  q.ip_id = U16(quote, 4);
  q.ip_ttl = quote[8];
  q.udp_length = U16(udp, 4);
  q.udp_checksum = U16(udp, 6);
  // Never more payload than the probe had, even if the responder padded.
  const std::size_t quoted_payload = udp.size() - kUdpHeaderBytes;
  const std::size_t sent_payload =
      q.udp_length >= kUdpHeaderBytes ? q.udp_length - kUdpHeaderBytes : 0;
  const auto payload = udp.subspan(kUdpHeaderBytes, std::min(quoted_payload, sent_payload));
  q.payload.assign(payload.begin(), payload.end());
  out.status = ParseStatus::kOk;
  return out;
}

}  // namespace hostmesh::tracer
