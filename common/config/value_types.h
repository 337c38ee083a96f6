#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>

namespace hostmesh::config {

// A size in bytes, a distinct type so "64MiB" is read as a size and not an integer.
struct ByteSize {
  std::uint64_t bytes = 0;
  friend auto operator<=>(const ByteSize&, const ByteSize&) = default;
};

constexpr ByteSize KiB(std::uint64_t n) {
  return {n << 10};
}
constexpr ByteSize MiB(std::uint64_t n) {
  return {n << 20};
}
constexpr ByteSize GiB(std::uint64_t n) {
  return {n << 30};
}

// An IPv4 or IPv6 address in network byte order.
struct IpAddress {
  enum class Family : std::uint8_t { kV4, kV6 };
  Family family = Family::kV4;
  // IPv4 uses the first 4 bytes; the rest stay zero so comparison is exact.
  std::array<std::uint8_t, 16> bytes{};

  bool is_v4() const { return family == Family::kV4; }
  // Canonical text (inet_ntop): "198.18.0.1", "fd00::1".
  std::string ToString() const;
  friend auto operator<=>(const IpAddress&, const IpAddress&) = default;
};

// host:port, where host is a name, an IPv4 address or an IPv6 address. IPv6 is
// bracketed in text ("[fd00::1]:50051") and stored without brackets.
struct Endpoint {
  std::string host;
  std::uint16_t port = 0;

  // Text as accepted by ParseEndpoint, brackets restored for IPv6.
  std::string ToString() const;
  friend auto operator<=>(const Endpoint&, const Endpoint&) = default;
};

}  // namespace hostmesh::config
