// ICMP parsing over a fixture table of real packets (packet_fixtures.h), plus
// packets derived from them the way lossy or terse responders produce them.
#include "tracer/icmp_packet.h"

#include <gtest/gtest.h>

#include "tests/tracer/packet_fixtures.h"

namespace hostmesh::tracer {
namespace {

using fixtures::Bytes;

Ipv4 Ip(const char* text) {
  return *Ipv4::Parse(text);
}

// Rewrites a real reply as a responder that quotes only the IP header and the
// first `udp_bytes` of the datagram would send it (8 is RFC 792's minimum),
// lengths and checksum included.
std::vector<std::uint8_t> WithShortQuote(std::vector<std::uint8_t> packet,
                                         std::size_t udp_bytes = 8) {
  const std::size_t keep = 20 + 8 + 20 + udp_bytes;
  packet.resize(keep);
  packet[2] = 0;
  packet[3] = static_cast<std::uint8_t>(keep);
  packet[22] = packet[23] = 0;
  const std::uint16_t sum = InternetChecksum(std::span(packet).subspan(20));
  packet[22] = static_cast<std::uint8_t>(sum >> 8);
  packet[23] = static_cast<std::uint8_t>(sum);
  return packet;
}

struct Row {
  const char* name;
  std::vector<std::uint8_t> packet;
  ParseStatus status;
  IcmpKind kind = IcmpKind::kTimeExceeded;
  const char* responder = "";
  std::uint16_t sport = 0;
  std::uint16_t udp_length = 0;
  std::size_t quoted_payload = 0;
};

std::vector<Row> Table() {
  auto truncated = Bytes(fixtures::kTimeExceededTtl2);
  truncated.resize(40);  // cut inside the quoted IP header
  auto short_by_one = Bytes(fixtures::kPortUnreachableTtl4);
  short_by_one.pop_back();  // the outer total length promises one byte more
  auto bad_sum = Bytes(fixtures::kTimeExceededTtl3);
  bad_sum.back() ^= 0x01;
  return {
      {"time exceeded ttl1", Bytes(fixtures::kTimeExceededTtl1), ParseStatus::kOk,
       IcmpKind::kTimeExceeded, "198.18.0.0", 49152, 24, 16},
      {"time exceeded ttl2", Bytes(fixtures::kTimeExceededTtl2), ParseStatus::kOk,
       IcmpKind::kTimeExceeded, "198.19.0.1", 49152, 25, 17},
      {"time exceeded ttl3", Bytes(fixtures::kTimeExceededTtl3), ParseStatus::kOk,
       IcmpKind::kTimeExceeded, "198.19.0.8", 49152, 26, 18},
      {"port unreachable", Bytes(fixtures::kPortUnreachableTtl4), ParseStatus::kOk,
       IcmpKind::kPortUnreachable, "198.18.0.9", 49152, 27, 19},
      {"foreign 5-tuple", Bytes(fixtures::kTimeExceededSport49153), ParseStatus::kOk,
       IcmpKind::kTimeExceeded, "198.19.0.1", 49153, 25, 17},
      {"net unreachable", Bytes(fixtures::kNetUnreachable), ParseStatus::kOk,
       IcmpKind::kOtherUnreachable, "198.19.0.1", 49152, 28, 20},
      {"traceroute(8) probe", Bytes(fixtures::kTracerouteTtl1), ParseStatus::kOk,
       IcmpKind::kTimeExceeded, "198.18.0.0", 49152, 40, 32},
      {"short quote", WithShortQuote(Bytes(fixtures::kTimeExceededTtl2)), ParseStatus::kOk,
       IcmpKind::kTimeExceeded, "198.19.0.1", 49152, 25, 0},
      {"truncated quote header", truncated, ParseStatus::kTruncated},
      {"truncated udp header", WithShortQuote(Bytes(fixtures::kTimeExceededTtl2), 4),
       ParseStatus::kTruncated},
      {"truncated below its length", short_by_one, ParseStatus::kTruncated},
      {"bad checksum", bad_sum, ParseStatus::kBadChecksum},
      {"udp, not icmp", Bytes(fixtures::kUdpProbe), ParseStatus::kNotIcmp},
      {"echo reply", Bytes(fixtures::kEchoReply), ParseStatus::kNotIcmpError},
      {"empty", {}, ParseStatus::kNotIcmp},
      {"ipv6", {0x60, 0, 0, 0}, ParseStatus::kNotIcmp},
  };
}

TEST(IcmpPacket, FixtureTable) {
  for (const Row& row : Table()) {
    SCOPED_TRACE(row.name);
    const ParsedIcmp parsed = ParseIcmpPacket(row.packet);
    ASSERT_EQ(parsed.status, row.status) << ToString(parsed.status);
    if (row.status != ParseStatus::kOk) continue;
    const IcmpError& e = parsed.error;
    EXPECT_EQ(e.kind, row.kind);
    EXPECT_EQ(e.responder, Ip(row.responder));
    EXPECT_EQ(e.to, Ip("198.18.0.1"));
    EXPECT_EQ(e.quoted.tuple.src, Ip("198.18.0.1"));
    EXPECT_EQ(e.quoted.tuple.dport, 4791);
    EXPECT_EQ(e.quoted.tuple.protocol, kIpProtoUdp);
    EXPECT_EQ(e.quoted.tuple.sport, row.sport);
    EXPECT_EQ(e.quoted.udp_length, row.udp_length);
    EXPECT_EQ(e.quoted.payload.size(), row.quoted_payload);
  }
}

TEST(IcmpPacket, QuotedFieldsOfATimeExceeded) {
  const ParsedIcmp parsed = ParseIcmpPacket(Bytes(fixtures::kTimeExceededTtl1));
  ASSERT_EQ(parsed.status, ParseStatus::kOk);
  EXPECT_EQ(parsed.error.type, 11);
  EXPECT_EQ(parsed.error.code, 0);
  EXPECT_EQ(parsed.error.quoted.tuple.dst, Ip("198.18.0.9"));
  EXPECT_EQ(parsed.error.quoted.ip_ttl, 1);
  EXPECT_EQ(parsed.error.quoted.ip_id, 0x7792);
  EXPECT_EQ(parsed.error.quoted.udp_checksum, 0x8c58);
}

TEST(IcmpPacket, NetUnreachableKeepsItsCode) {
  const ParsedIcmp parsed = ParseIcmpPacket(Bytes(fixtures::kNetUnreachable));
  ASSERT_EQ(parsed.status, ParseStatus::kOk);
  EXPECT_EQ(parsed.error.type, 3);
  EXPECT_EQ(parsed.error.code, 0);
  EXPECT_EQ(parsed.error.quoted.tuple.dst, Ip("198.18.200.1"));
}

TEST(IcmpPacket, ChecksumOfARealPacketVerifies) {
  const auto packet = Bytes(fixtures::kTimeExceededTtl2);
  EXPECT_EQ(InternetChecksum(std::span(packet).first(20)), 0);    // outer IP header
  EXPECT_EQ(InternetChecksum(std::span(packet).subspan(20)), 0);  // ICMP
}

}  // namespace
}  // namespace hostmesh::tracer
