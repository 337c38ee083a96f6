#pragma once

// Parsing what a raw ICMP socket delivers: an IPv4 packet carrying an ICMP
// error that quotes one of our UDP probes. Pure: bytes in, struct out.

#include <cstdint>
#include <span>
#include <vector>

#include "tracer/ipv4.h"

namespace hostmesh::tracer {

enum class IcmpKind : std::uint8_t {
  kTimeExceeded,      // type 11: a hop on the way
  kPortUnreachable,   // type 3 code 3: the destination host itself
  kOtherUnreachable,  // type 3, another code: someone refuses to forward (see `code`)
};

enum class ParseStatus : std::uint8_t {
  kOk,
  kNotIcmp,       // not IPv4, or IPv4 with another protocol
  kTruncated,     // shorter than its headers or its own length fields say
  kBadChecksum,   // ICMP checksum wrong (raw sockets see packets before icmp_rcv checks)
  kNotIcmpError,  // an ICMP message that quotes nothing (echo, redirect, ...)
  kQuotedNotUdp,  // the quoted datagram is not UDP, or a non-first fragment
};

const char* ToString(ParseStatus status);

// The quoted probe: its IP header fields and its UDP header (plus whatever
// payload the responder chose to quote, often none).
struct QuotedUdp {
  FiveTuple tuple;
  std::uint16_t ip_id = 0;
  std::uint8_t ip_ttl = 0;  // as the responder saw it (1 for time exceeded)
  std::uint16_t udp_length = 0;
  std::uint16_t udp_checksum = 0;
  std::vector<std::uint8_t> payload;
};

struct IcmpError {
  Ipv4 responder;  // outer source: the hop (its ingress interface) or the destination
  Ipv4 to;         // outer destination: our probe's source
  IcmpKind kind = IcmpKind::kTimeExceeded;
  std::uint8_t type = 0;
  std::uint8_t code = 0;
  QuotedUdp quoted;
};

struct ParsedIcmp {
  ParseStatus status = ParseStatus::kNotIcmp;
  IcmpError error;  // meaningful when status == kOk
};

// `ip_packet` starts at the outer IPv4 header (raw IPPROTO_ICMP sockets
// deliver it so).
ParsedIcmp ParseIcmpPacket(std::span<const std::uint8_t> ip_packet);

// Internet checksum (RFC 1071) of `bytes`; 0 over a block that holds a correct one.
std::uint16_t InternetChecksum(std::span<const std::uint8_t> bytes);

}  // namespace hostmesh::tracer
