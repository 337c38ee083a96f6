#pragma once

// RoCEv2 on the wire: the UDP destination port of every RoCEv2 packet, which
// the agent's probes use (kernel UDP and verbs alike) and the tracer's
// traceroutes copy, so that both follow one ECMP path.

#include <cstdint>

namespace hostmesh::net {

inline constexpr std::uint16_t kRoceV2Port = 4791;

}  // namespace hostmesh::net
