#pragma once

#include <cstdint>

namespace hostmesh::agent::app {

// Per-NIC figures only the concrete transport knows.
struct TransportNicStats {
  std::uint64_t receive_errors = 0;
  double clock_fit_error_seconds = 0;
};

}  // namespace hostmesh::agent::app
