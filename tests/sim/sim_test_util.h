#pragma once

// Small helpers shared by the simulator's tests: components by their names in
// the generated fabric (topology/README.md: hosts h000, rail switches p0r1,
// spines s02, links h000.nic1-p0r1 and p0r1-s02).

#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/fleet.h"

namespace hostmesh::sim::testing {

inline constexpr std::int64_t kSecond = 1'000'000'000;
inline constexpr std::int64_t kWindow = 20 * kSecond;  // the analyzer's default

inline LinkId LinkNamed(const Fleet& fleet, const std::string& name) {
  const auto links = fleet.topology().links();
  for (LinkId l = 0; l < links.size(); ++l) {
    if (links[l].name == name) return l;
  }
  throw std::invalid_argument("no link " + name);
}

inline DeviceId DeviceNamed(const Fleet& fleet, const std::string& name) {
  const auto d = fleet.topology().FindDevice(name);
  if (!d) throw std::invalid_argument("no device " + name);
  return *d;
}

}  // namespace hostmesh::sim::testing
