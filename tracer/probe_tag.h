#pragma once

// How a reply is told apart from the replies to our other probes.
//
// An ICMP error quotes the probe's IP header and at least the first 8 bytes of
// its UDP header (RFC 792); Linux routers quote up to 576 bytes, many switch
// ASICs' CPUs only the 8. So the probe id lives where every quote has it: the
// UDP length. Each probe of a trace gets
//
//   UDP payload bytes = kTagBytes + (generation % kGenerations) * kMaxTtl + (ttl - 1)
//
// which the ECMP hash ignores (it covers addresses, protocol and ports only),
// so every TTL follows the same path. The generation (a per-trace counter) keeps
// a late reply to the previous trace of the same 5-tuple from being taken for
// the current one. The IP ID would do too, but a UDP socket cannot set it (the
// kernel picks it), and the UDP checksum is computed by the kernel.
//
// When the quote is long enough, the payload's tag (magic, ttl, generation,
// session) is checked as well: a probe of another tracer process (say
// `hostmeshctl trace` beside the agent) with the same 5-tuple is then foreign.
//
// The destination port is RoCEv2's 4791, so a probe reaching a real RNIC is
// dropped by its BTH parser, and one reaching the agent's UDP receiver is not
// a valid probe frame (wrong magic) and is discarded there.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/base/wire_magic.h"
#include "common/net/ttl.h"

namespace hostmesh::tracer {

using net::kMaxTtl;
inline constexpr std::uint32_t kGenerations = 4;
inline constexpr std::size_t kTagBytes = 16;
inline constexpr std::array<std::uint8_t, 4> kTagMagic = {
    static_cast<std::uint8_t>(kTraceMagic >> 24), static_cast<std::uint8_t>(kTraceMagic >> 16),
    static_cast<std::uint8_t>(kTraceMagic >> 8), static_cast<std::uint8_t>(kTraceMagic)};

struct ProbeTag {
  int ttl = 1;                   // 1..kMaxTtl
  std::uint32_t generation = 0;  // which trace of this 5-tuple
  std::uint32_t session = 0;     // which tracer (random per process)
  bool operator==(const ProbeTag&) const = default;
};

// The UDP payload of the probe: the tag, zero-padded to the length that
// encodes (ttl, generation). Empty when ttl is out of range.
std::vector<std::uint8_t> EncodeProbePayload(const ProbeTag& tag);

// What the quoted UDP length says.
struct LengthId {
  int ttl = 0;
  std::uint32_t generation_mod = 0;  // generation % kGenerations
  bool operator==(const LengthId&) const = default;
};
std::uint16_t UdpLengthFor(int ttl, std::uint32_t generation);
std::optional<LengthId> DecodeUdpLength(std::uint16_t udp_length);

// The tag in a quoted payload, when at least kTagBytes of it were quoted and
// the magic is there; nullopt otherwise (a short quote is not an error).
std::optional<ProbeTag> DecodePayloadTag(std::span<const std::uint8_t> quoted_payload);

}  // namespace hostmesh::tracer
