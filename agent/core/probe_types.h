#pragma once

// Plain structs shared by the agent's pure core (scheduler, tracker, codec) and
// the transports. No I/O here; the uploader maps ProbeResult onto the wire.

#include <cstdint>

#include "common/base/clock.h"

namespace hostmesh::agent {

// A local NIC: its index in the agent's NIC list (config order). Stable for
// one boot, which is what hostmesh.v1.Nic.id promises.
using NicId = std::uint32_t;

// Mirrors hostmesh.v1.TimestampSource (same numbers), most faithful last.
enum class TimestampSource : std::uint8_t {
  kUnspecified = 0,
  kUser = 1,      // clock read by the application
  kKernel = 2,    // SO_TIMESTAMPING software stamp
  kHardware = 3,  // NIC clock, mapped into host time
};

// One timestamp in the host's CLOCK_REALTIME timebase (ns since the Unix
// epoch), 0 when not available, with where it came from.
struct Timestamp {
  std::int64_t ns = 0;
  TimestampSource source = TimestampSource::kUnspecified;

  bool known() const { return ns != 0; }
  friend bool operator==(const Timestamp&, const Timestamp&) = default;
};

// What the scheduler asks the I/O loop to send now.
struct ProbeOrder {
  NicId src = 0;
  NicId dst = 0;
  std::uint16_t src_port = 0;  // from the source NIC's port pool
  std::uint16_t dst_port = 0;
  std::uint64_t sequence = 0;         // per source NIC, starts at 1, strictly increasing
  MonoTime due{};                     // when it was scheduled (may be a little before it is popped)
  std::uint64_t pool_generation = 0;  // of the source NIC's pool when the port was drawn

  friend bool operator==(const ProbeOrder&, const ProbeOrder&) = default;
};

// One probe's outcome; field for field hostmesh.v1.ProbeResult.
struct ProbeResult {
  NicId src_nic = 0;
  NicId dst_nic = 0;
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  std::uint64_t sequence = 0;
  std::int64_t send_time_ns = 0;  // when the scheduler issued the probe (realtime)

  // The four timestamps (0 = not available).
  std::int64_t app_send_ns = 0;  // (1) application posts the send
  std::int64_t nic_send_ns = 0;  // (2) sender NIC send completion
  std::int64_t nic_recv_ns = 0;  // (3) receiver NIC receive completion
  std::int64_t app_recv_ns = 0;  // (4) application reads the receive
  TimestampSource send_timestamp_source = TimestampSource::kUnspecified;  // of (2)
  TimestampSource recv_timestamp_source = TimestampSource::kUnspecified;  // of (3)

  bool timeout = false;
  bool send_failed = false;  // never left the local NIC (not a timeout, not loss)
  std::uint32_t payload_bytes = 0;
  std::int64_t timestamp_error_ns = 0;  // filled by whoever maps NIC clocks; 0 = unknown

  friend bool operator==(const ProbeResult&, const ProbeResult&) = default;
};

// One-way network latency (3)-(2) and end-host processing delay
// ((4)-(1)) - ((3)-(2)) in seconds; false when a timestamp is missing.
inline bool NetworkLatencySeconds(const ProbeResult& r, double* seconds) {
  if (r.timeout || r.nic_send_ns == 0 || r.nic_recv_ns == 0) return false;
  *seconds = static_cast<double>(r.nic_recv_ns - r.nic_send_ns) * 1e-9;
  return true;
}

inline bool ProcessingDelaySeconds(const ProbeResult& r, double* seconds) {
  if (r.timeout || r.app_send_ns == 0 || r.nic_send_ns == 0 || r.nic_recv_ns == 0 ||
      r.app_recv_ns == 0) {
    return false;
  }
  const std::int64_t total = r.app_recv_ns - r.app_send_ns;
  const std::int64_t network = r.nic_recv_ns - r.nic_send_ns;
  *seconds = static_cast<double>(total - network) * 1e-9;
  return true;
}

}  // namespace hostmesh::agent
