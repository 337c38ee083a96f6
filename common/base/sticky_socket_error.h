#pragma once

// The errors an ICMP error leaves on a UDP socket (sk_err: a connected one,
// or any with IP_RECVERR), reported once by its next send, which then does
// not go out: a peer's Port Unreachable (ECONNREFUSED), Host or Net
// Unreachable, a Parameter Problem (EPROTO). Such a send is worth one retry.
// EHOSTUNREACH and ENETUNREACH also come from the local routing table, where
// the retry fails the same way.

#include <cerrno>

namespace hostmesh {

inline bool IsStickyIcmpError(int error) {
  return error == ECONNREFUSED || error == EHOSTUNREACH || error == ENETUNREACH || error == EPROTO;
}

}  // namespace hostmesh
