#pragma once

// The first four bytes of every UDP payload hostmesh puts on port 4791, in one
// place so the receiver can tell its own kinds apart: a probe ("HMPR") from
// the last TTL of a traceroute ("HMTR"), which reaches the destination NIC's
// probe receiver by design (the tracer traces the probe's exact 5-tuple).

#include <cstdint>

namespace hostmesh {

inline constexpr std::uint32_t kProbeMagic = 0x484D5052;  // "HMPR"
inline constexpr std::uint32_t kTraceMagic = 0x484D5452;  // "HMTR"

}  // namespace hostmesh
