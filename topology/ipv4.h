#pragma once

// The fabric's addresses: the one IPv4 type of common/net.

#include <optional>
#include <string_view>

#include "common/net/ipv4.h"

namespace hostmesh::topology {

using Ipv4 = net::Ipv4;

inline std::optional<Ipv4> ParseIpv4(std::string_view text) {
  return Ipv4::Parse(text);
}

}  // namespace hostmesh::topology
