#pragma once

// Builds ICMP errors as a router sends them: the tracer's tests and the fleet
// simulator answer traceroute probes with these bytes, so the real parser and
// matcher (icmp_packet.h, probe_matcher.h) read them as they read the wire.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tracer/ipv4.h"

namespace hostmesh::tracer {

// An ICMP error (`type`, `code`) from `from` to `to`, quoting the IPv4/UDP
// datagram of `tuple` with `payload`, of which `quote_payload_bytes` are quoted
// (RFC 792 asks for 8; Linux quotes up to 576 bytes in all).
std::vector<std::uint8_t> BuildIcmpError(Ipv4 from, Ipv4 to, std::uint8_t type, std::uint8_t code,
                                         const FiveTuple& tuple,
                                         std::span<const std::uint8_t> payload,
                                         std::size_t quote_payload_bytes);

}  // namespace hostmesh::tracer
