#pragma once

// The RoCEv2 UDP source port of a UD probe is not set directly: the NIC
// derives it from the GRH flow label of the address handle. rdma-core 44
// (infiniband/verbs.h, ibv_flow_label_to_udp_sport) and the kernel
// (rdma_flow_label_to_udp_sport) use the same formula:
//
//   sport = 0xC000 | ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14))
//
// i.e. the low 14 bits of the 20-bit label XORed with its top 6 bits, with the
// two top port bits forced to 1. Every port in 0xC000..0xFFFF (49152..65535)
// is therefore reachable and nothing below it is. The inverse below picks, for
// a wanted port, the label whose top 6 bits are 0 -- except for port 0xC000,
// whose natural label 0 means "no flow label" to providers (they would pick
// their own port), so it gets 0x04001 instead.

#include <cstdint>
#include <optional>

namespace hostmesh::agent::verbs {

inline constexpr std::uint16_t kRoceMinUdpSport = 0xC000;
inline constexpr std::uint32_t kFlowLabelMask = 0xFFFFF;

// A nonzero 20-bit flow label that ibv_flow_label_to_udp_sport maps to
// `sport`, or nullopt when `sport` is below 49152 (unreachable).
std::optional<std::uint32_t> FlowLabelForUdpSport(std::uint16_t sport);

// The formula above, for code that must not include <infiniband/verbs.h>
// (the tests check it against the real inline function).
constexpr std::uint16_t UdpSportForFlowLabel(std::uint32_t flow_label) {
  const std::uint32_t low = flow_label & 0x03FFF;
  const std::uint32_t high = (flow_label & 0xFC000) >> 14;
  return static_cast<std::uint16_t>((low ^ high) | kRoceMinUdpSport);
}

}  // namespace hostmesh::agent::verbs
