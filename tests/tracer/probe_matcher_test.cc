// Matching replies to probes: by quoted 5-tuple, UDP length and tag.
#include "tracer/probe_matcher.h"

#include <gtest/gtest.h>

#include "tests/tracer/packet_fixtures.h"
#include "tracer/probe_tag.h"

namespace hostmesh::tracer {
namespace {

using fixtures::Bytes;

TraceIdentity Trace(std::uint16_t sport, std::uint32_t generation,
                    std::uint32_t session = fixtures::kSession) {
  TraceIdentity t;
  t.tuple.src = *Ipv4::Parse("198.18.0.1");
  t.tuple.dst = *Ipv4::Parse("198.18.0.9");
  t.tuple.sport = sport;
  t.generation = generation;
  t.session = session;
  return t;
}

Match MatchFixture(std::string_view hex, const TraceIdentity& trace) {
  const ParsedIcmp parsed = ParseIcmpPacket(Bytes(hex));
  EXPECT_EQ(parsed.status, ParseStatus::kOk);
  return MatchReply(parsed.error, trace);
}

TEST(ProbeTag, LengthEncodesTtlAndGeneration) {
  for (std::uint32_t gen = 0; gen < 9; ++gen) {
    for (int ttl = 1; ttl <= kMaxTtl; ++ttl) {
      const auto payload = EncodeProbePayload({ttl, gen, 7});
      ASSERT_EQ(payload.size() + 8, UdpLengthFor(ttl, gen));
      const auto id = DecodeUdpLength(UdpLengthFor(ttl, gen));
      ASSERT_TRUE(id);
      EXPECT_EQ(*id, (LengthId{ttl, gen % kGenerations}));
      EXPECT_EQ(DecodePayloadTag(payload), (ProbeTag{ttl, gen, 7}));
    }
  }
  EXPECT_FALSE(DecodeUdpLength(23));
  EXPECT_FALSE(DecodeUdpLength(static_cast<std::uint16_t>(24 + kGenerations * kMaxTtl)));
  EXPECT_TRUE(EncodeProbePayload({0, 0, 0}).empty());
  EXPECT_TRUE(EncodeProbePayload({kMaxTtl + 1, 0, 0}).empty());
}

TEST(ProbeMatcher, MatchesEachTtlOfTheRealTrace) {
  const TraceIdentity trace = Trace(49152, 0);
  EXPECT_EQ(MatchFixture(fixtures::kTimeExceededTtl1, trace).ttl, 1);
  EXPECT_EQ(MatchFixture(fixtures::kTimeExceededTtl2, trace).ttl, 2);
  EXPECT_EQ(MatchFixture(fixtures::kTimeExceededTtl3, trace).ttl, 3);
  const Match last = MatchFixture(fixtures::kPortUnreachableTtl4, trace);
  EXPECT_EQ(last.verdict, MatchVerdict::kMatched);
  EXPECT_EQ(last.ttl, 4);
}

TEST(ProbeMatcher, AnotherSourcePortIsForeign) {
  EXPECT_EQ(MatchFixture(fixtures::kTimeExceededSport49153, Trace(49152, 0)).verdict,
            MatchVerdict::kForeign);
  EXPECT_EQ(MatchFixture(fixtures::kTimeExceededSport49153, Trace(49153, 0)).ttl, 2);
}

TEST(ProbeMatcher, TracerouteOnTheSame5TupleIsForeign) {
  EXPECT_EQ(MatchFixture(fixtures::kTracerouteTtl1, Trace(49152, 0)).verdict,
            MatchVerdict::kForeign);
}

TEST(ProbeMatcher, AnotherSessionIsForeign) {
  EXPECT_EQ(MatchFixture(fixtures::kTimeExceededTtl2, Trace(49152, 0, 42)).verdict,
            MatchVerdict::kForeign);
}

TEST(ProbeMatcher, EarlierGenerationIsStale) {
  // Same generation modulo kGenerations: only the quoted tag tells them apart.
  EXPECT_EQ(MatchFixture(fixtures::kTimeExceededGen1Ttl3, Trace(49152, 5)).verdict,
            MatchVerdict::kStale);
  // Another residue: the UDP length alone tells.
  EXPECT_EQ(MatchFixture(fixtures::kTimeExceededGen1Ttl3, Trace(49152, 2)).verdict,
            MatchVerdict::kStale);
  EXPECT_EQ(MatchFixture(fixtures::kTimeExceededGen1Ttl3, Trace(49152, 1)).ttl, 3);
}

TEST(ProbeMatcher, ShortQuoteMatchesByLengthAlone) {
  const ParsedIcmp parsed = ParseIcmpPacket(Bytes(fixtures::kTimeExceededTtl2));
  IcmpError reply = parsed.error;
  reply.quoted.payload.clear();  // a switch that quotes 8 bytes of UDP
  EXPECT_EQ(MatchReply(reply, Trace(49152, 0, 1234)).ttl, 2);  // no tag: session unknowable
  EXPECT_EQ(MatchReply(reply, Trace(49152, 1)).verdict, MatchVerdict::kStale);
}

}  // namespace
}  // namespace hostmesh::tracer
