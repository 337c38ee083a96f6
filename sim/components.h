#pragma once

// What a verdict or a fault names, in one comparable form: a category (packet
// loss, latency, host processing) and a component (fabric link, RNIC, switch,
// host). RNICs are named by fleet host index, not the analyzer's host id.

#include <cstdint>
#include <string>

#include "sim/fleet.h"

namespace hostmesh::sim {

enum class Category : std::uint8_t { kLoss = 0, kLatency = 1, kHost = 2 };
enum class ComponentKind : std::uint8_t { kLink = 1, kRnic = 2, kSwitch = 3, kHost = 4 };

using ComponentKey = std::uint64_t;

inline ComponentKey MakeKey(Category c, ComponentKind k, std::uint64_t id) {
  return (std::uint64_t{static_cast<std::uint8_t>(c)} << 60) |
         (std::uint64_t{static_cast<std::uint8_t>(k)} << 56) | (id & ((1ULL << 56) - 1));
}
inline ComponentKey LinkKey(Category c, LinkId link) {
  return MakeKey(c, ComponentKind::kLink, link);
}
inline ComponentKey RnicKey(Category c, std::uint32_t host, std::uint32_t nic) {
  return MakeKey(c, ComponentKind::kRnic, (std::uint64_t{host} << 8) | nic);
}
inline ComponentKey SwitchKey(Category c, DeviceId sw) {
  return MakeKey(c, ComponentKind::kSwitch, sw);
}
inline ComponentKey HostKey(std::uint32_t host) {
  return MakeKey(Category::kHost, ComponentKind::kHost, host);
}
inline Category CategoryOf(ComponentKey k) {
  return static_cast<Category>(k >> 60);
}
inline ComponentKind KindOf(ComponentKey k) {
  return static_cast<ComponentKind>((k >> 56) & 0xF);
}
inline std::uint64_t IdOf(ComponentKey k) {
  return k & ((1ULL << 56) - 1);
}

// "loss link p0r1-s02", "loss rnic h003/nic1", "latency link ...", "host h005".
std::string DescribeKey(const Fleet& fleet, ComponentKey key);

}  // namespace hostmesh::sim
