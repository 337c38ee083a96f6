// The tracer's ICMP parser and reply matcher (tracer/icmp_packet.h,
// probe_matcher.h, probe_tag.h): what any router, or anyone able to send ICMP
// to the host, hands the raw socket. Each input is parsed as it came and once
// more with its ICMP checksum made right (so the fuzzer gets past it); a
// parsed error is matched against the trace of the 5-tuple it quotes (its
// own generation and session, the next generation, another session) and
// against a trace of another 5-tuple, which must call it foreign.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "tracer/icmp_packet.h"
#include "tracer/probe_matcher.h"
#include "tracer/probe_tag.h"

using namespace hostmesh::tracer;

namespace {

void CheckMatch(const IcmpError& error, const TraceIdentity& trace) {
  const Match match = MatchReply(error, trace);
  if (match.verdict == MatchVerdict::kMatched) {
    FUZZ_CHECK(match.ttl >= 1 && match.ttl <= kMaxTtl);
    FUZZ_CHECK(error.quoted.tuple == trace.tuple);
  }
}

void Check(std::span<const std::uint8_t> packet) {
  const ParsedIcmp parsed = ParseIcmpPacket(packet);
  FUZZ_CHECK(ToString(parsed.status) != nullptr);
  if (parsed.status != ParseStatus::kOk) return;
  const IcmpError& error = parsed.error;
  FUZZ_CHECK(error.quoted.payload.size() <= packet.size());
  TraceIdentity trace{error.quoted.tuple, 0, 0};
  if (const auto id = DecodeUdpLength(error.quoted.udp_length)) {
    FUZZ_CHECK(id->ttl >= 1 && id->ttl <= kMaxTtl && id->generation_mod < kGenerations);
    FUZZ_CHECK(UdpLengthFor(id->ttl, id->generation_mod) == error.quoted.udp_length);
    trace.generation = id->generation_mod;
  }
  if (const auto tag = DecodePayloadTag(error.quoted.payload)) {
    trace.generation = tag->generation;
    trace.session = tag->session;
  }
  CheckMatch(error, trace);
  CheckMatch(error, {trace.tuple, trace.generation + 1, trace.session});
  CheckMatch(error, {trace.tuple, trace.generation, trace.session + 1});
  FiveTuple other = trace.tuple;
  ++other.sport;
  FUZZ_CHECK(MatchReply(error, {other, trace.generation, trace.session}).verdict ==
             MatchVerdict::kForeign);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Check({data, size});
  // The ICMP checksum, where the IPv4 header says the ICMP message is.
  if (size < 20) return 0;
  const std::size_t ihl = std::size_t{data[0] & 0x0Fu} * 4;
  const std::size_t total = (std::size_t{data[2]} << 8) | data[3];
  if (ihl < 20 || total < ihl + 8 || total > size) return 0;
  std::vector<std::uint8_t> mended(data, data + size);
  mended[ihl + 2] = mended[ihl + 3] = 0;
  const std::uint16_t sum =
      InternetChecksum(std::span<const std::uint8_t>(mended).subspan(ihl, total - ihl));
  mended[ihl + 2] = static_cast<std::uint8_t>(sum >> 8);
  mended[ihl + 3] = static_cast<std::uint8_t>(sum);
  Check(mended);
  return 0;
}
