#pragma once

// IPv4 addresses and the UDP 5-tuple a trace follows. The fabric is IPv4
// (DESIGN 4.5), and ICMPv4 is what the tracer parses.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/net/ipv4.h"
#include "common/net/roce.h"

namespace hostmesh::tracer {

using Ipv4 = net::Ipv4;

inline constexpr std::uint8_t kIpProtoUdp = 17;
using net::kRoceV2Port;  // the 5-tuple a trace copies is a RoCEv2 probe's

struct FiveTuple {
  Ipv4 src;
  Ipv4 dst;
  std::uint16_t sport = 0;
  std::uint16_t dport = kRoceV2Port;
  std::uint8_t protocol = kIpProtoUdp;

  std::string ToString() const;  // "198.18.0.1:49152 -> 198.18.0.9:4791 udp"
  auto operator<=>(const FiveTuple&) const = default;
};

}  // namespace hostmesh::tracer
