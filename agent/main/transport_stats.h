#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace hostmesh::agent::app {

// An RNIC's async-event state (verbs/nic_health.h), for the metrics.
struct RnicHealthStats {
  // Async events by kind: port_active, port_down, qp_fatal, device_fatal (CQ error included).
  std::vector<std::pair<std::string_view, std::uint64_t>> async_events;
  std::uint64_t qp_recoveries = 0;
  std::uint64_t qp_recovery_failures = 0;
  std::uint64_t reopens = 0;              // device reopened after a CQ or device error
  std::uint64_t receive_queue_empty = 0;  // polls that found every posted receive used
  // The NIC probes (port active, device usable); false while paused: port
  // down, or the device failed and is being reopened.
  bool port_up = true;
};

// A UDP socket's error-queue messages that are not send timestamps.
struct ErrorQueueStats {
  std::uint64_t icmp_errors = 0;  // ICMP errors for our sends (a peer's port unreachable, ...)
  std::uint64_t other = 0;        // local errors, and messages the agent does not understand
};

// Per-NIC figures only the concrete transport knows.
struct TransportNicStats {
  std::uint64_t receive_errors = 0;
  double clock_fit_error_seconds = 0;
  std::optional<RnicHealthStats> rnic_health;  // verbs NICs that opened
  std::optional<ErrorQueueStats> error_queue;  // UDP NICs
};

}  // namespace hostmesh::agent::app
