#include "tracer/icmp_builder.h"

#include <algorithm>

#include "tracer/icmp_packet.h"

namespace hostmesh::tracer {

std::vector<std::uint8_t> BuildIcmpError(Ipv4 from, Ipv4 to, std::uint8_t type, std::uint8_t code,
                                         const FiveTuple& tuple,
                                         std::span<const std::uint8_t> payload,
                                         std::size_t quote_payload_bytes) {
  const std::size_t quoted = std::min(quote_payload_bytes, payload.size());
  std::vector<std::uint8_t> p(20 + 8 + 20 + 8 + quoted, 0);
  const auto put16 = [&](std::size_t at, std::uint32_t v) {
    p[at] = static_cast<std::uint8_t>(v >> 8);
    p[at + 1] = static_cast<std::uint8_t>(v);
  };
  const auto put32 = [&](std::size_t at, std::uint32_t v) {
    put16(at, v >> 16);
    put16(at + 2, v & 0xFFFF);
  };
  // Outer IPv4 header: from the answering hop to the prober.
  p[0] = 0x45;
  put16(2, static_cast<std::uint32_t>(p.size()));
  p[8] = 64;
  p[9] = 1;
  put32(12, from.value);
  put32(16, to.value);
  // ICMP header, then the quoted datagram (its TTL as it expired: 1).
  p[20] = type;
  p[21] = code;
  p[28] = 0x45;
  put16(30, static_cast<std::uint32_t>(20 + 8 + payload.size()));
  p[36] = 1;
  p[37] = tuple.protocol;
  put32(40, tuple.src.value);
  put32(44, tuple.dst.value);
  put16(48, tuple.sport);
  put16(50, tuple.dport);
  put16(52, static_cast<std::uint32_t>(8 + payload.size()));
  std::copy_n(payload.begin(), quoted, p.begin() + 56);
  put16(10, InternetChecksum(std::span(p).first(20)));
  put16(22, InternetChecksum(std::span(p).subspan(20)));
  return p;
}

}  // namespace hostmesh::tracer
