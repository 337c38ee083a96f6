#include "tracer/probe_tag.h"

#include <algorithm>

namespace hostmesh::tracer {
namespace {

void PutU32(std::uint8_t* out, std::uint32_t v) {
  out[0] = static_cast<std::uint8_t>(v >> 24);
  out[1] = static_cast<std::uint8_t>(v >> 16);
  out[2] = static_cast<std::uint8_t>(v >> 8);
  out[3] = static_cast<std::uint8_t>(v);
}

std::uint32_t GetU32(const std::uint8_t* in) {
  return (std::uint32_t{in[0]} << 24) | (std::uint32_t{in[1]} << 16) | (std::uint32_t{in[2]} << 8) |
         std::uint32_t{in[3]};
}

constexpr std::size_t kUdpHeaderBytes = 8;

std::size_t PayloadBytesFor(int ttl, std::uint32_t generation) {
  return kTagBytes + (generation % kGenerations) * kMaxTtl + static_cast<std::size_t>(ttl - 1);
}

}  // namespace

std::uint16_t UdpLengthFor(int ttl, std::uint32_t generation) {
  return static_cast<std::uint16_t>(kUdpHeaderBytes + PayloadBytesFor(ttl, generation));
}

std::vector<std::uint8_t> EncodeProbePayload(const ProbeTag& tag) {
  if (tag.ttl < 1 || tag.ttl > kMaxTtl) return {};
  std::vector<std::uint8_t> payload(PayloadBytesFor(tag.ttl, tag.generation), 0);
  std::copy(kTagMagic.begin(), kTagMagic.end(), payload.begin());
  payload[4] = static_cast<std::uint8_t>(tag.ttl);
  PutU32(&payload[8], tag.generation);
  PutU32(&payload[12], tag.session);
  return payload;
}

std::optional<LengthId> DecodeUdpLength(std::uint16_t udp_length) {
  const std::size_t min = kUdpHeaderBytes + kTagBytes;
  const std::size_t max = min + kGenerations * kMaxTtl - 1;
  if (udp_length < min || udp_length > max) return std::nullopt;
  const std::size_t id = udp_length - min;
  return LengthId{static_cast<int>(id % kMaxTtl) + 1, static_cast<std::uint32_t>(id / kMaxTtl)};
}

std::optional<ProbeTag> DecodePayloadTag(std::span<const std::uint8_t> quoted_payload) {
  if (quoted_payload.size() < kTagBytes) return std::nullopt;
  if (!std::equal(kTagMagic.begin(), kTagMagic.end(), quoted_payload.begin())) return std::nullopt;
  return ProbeTag{quoted_payload[4], GetU32(&quoted_payload[8]), GetU32(&quoted_payload[12])};
}

}  // namespace hostmesh::tracer
