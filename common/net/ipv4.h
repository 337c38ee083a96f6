#pragma once

// One IPv4 address type for the whole tree: the fabric is IPv4 (DESIGN 4.5;
// /31 point-to-point links), the tracer parses ICMPv4, and the analyzer
// resolves traced hops against the inventory. An integer in host byte order
// makes /31 peer arithmetic and hashing trivial.

#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace hostmesh::net {

struct Ipv4 {
  std::uint32_t value = 0;

  // Strict dotted quad ("198.18.0.1"): four decimal parts 0..255, no leading
  // zeros beyond a lone "0", nothing else.
  static std::optional<Ipv4> Parse(std::string_view text);
  std::string ToString() const;
  constexpr bool IsZero() const { return value == 0; }
  // The other end of a /31 link.
  constexpr Ipv4 Peer31() const { return Ipv4{value ^ 1U}; }
  friend constexpr auto operator<=>(const Ipv4&, const Ipv4&) = default;
};

}  // namespace hostmesh::net

template <>
struct std::hash<hostmesh::net::Ipv4> {
  std::size_t operator()(const hostmesh::net::Ipv4& ip) const noexcept {
    // Fabric addresses are dense; a multiplicative mix spreads them over buckets.
    return static_cast<std::size_t>(ip.value * 0x9E3779B97F4A7C15ULL);
  }
};
