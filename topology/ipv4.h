#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace hostmesh::topology {

// An IPv4 address in host byte order: the fabric is IPv4 (/31 point-to-point
// links), and an integer makes /31 peer arithmetic and hashing trivial.
struct Ipv4 {
  std::uint32_t value = 0;

  // The other end of a /31 link.
  constexpr Ipv4 Peer31() const { return Ipv4{value ^ 1U}; }
  std::string ToString() const;
  friend constexpr auto operator<=>(const Ipv4&, const Ipv4&) = default;
};

// Strict dotted quad ("198.18.0.1"): four decimal parts 0..255, no leading zeros
// beyond a lone "0", nothing else.
std::optional<Ipv4> ParseIpv4(std::string_view text);

}  // namespace hostmesh::topology

template <>
struct std::hash<hostmesh::topology::Ipv4> {
  std::size_t operator()(const hostmesh::topology::Ipv4& ip) const noexcept {
    // Fabric addresses are dense; a multiplicative mix spreads them over buckets.
    return static_cast<std::size_t>(ip.value * 0x9E3779B97F4A7C15ULL);
  }
};
