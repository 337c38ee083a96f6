#pragma once

// The agent's flight recorder: the last minutes of what it saw (probe
// results, path reports, RDMA async events, QP recoveries, device reopens,
// clock-fit errors, NIC counter reads, warn+ log lines) in a FlightRing of a
// fixed byte budget, for the analyzer to ask for when an incident involves
// the host, or for an operator's local capture (docs/agent.md#flight-recorder).
// Thread-safe: every source records from its own thread under one short lock.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string_view>

#include "agent/core/probe_types.h"
#include "agent/recorder/flight_entry.h"
#include "agent/recorder/flight_ring.h"
#include "common/base/clock.h"
#include "hostmesh/v1/ingest.pb.h"
#include "tracer/path_report.h"

namespace hostmesh::agent::recorder {

// Caps of one extracted record (common/base/upload_limits.h bounds them on
// the wire): over either, the oldest events of the range are left out.
struct ExtractLimits {
  std::size_t max_events = 50'000;
  std::size_t max_bytes = std::size_t{2} << 20;  // encoded FlightRecord
};

class FlightRecorder {
 public:
  FlightRecorder(const Clock& clock, std::size_t capacity_bytes);

  // Any entry; a zero time_ns is stamped with the clock's realtime now.
  void Record(FlightEntry entry);
  void RecordProbe(const ProbeResult& result);
  // Several under one lock (a probe loop turn's).
  void RecordProbes(std::span<const ProbeResult> results);
  void RecordPath(const tracer::PathReport& report);
  void RecordCounters(const v1::NicTelemetry& telemetry);
  void RecordLog(std::string_view component, std::string_view level, std::string_view line);

  // The events of [from_ns, to_ns) as a record for `incident_id`.
  v1::FlightRecord Extract(std::uint64_t incident_id, std::int64_t from_ns, std::int64_t to_ns,
                           const ExtractLimits& limits = {}) const;
  // The same into a record a batch's arena already holds.
  void Extract(std::uint64_t incident_id, std::int64_t from_ns, std::int64_t to_ns,
               const ExtractLimits& limits, v1::FlightRecord& out) const;

  RingCounters counters() const;
  const Clock& clock() const { return clock_; }

 private:
  // Stamps a zero time_ns with the clock's realtime now, then stores; mu_ held.
  void PushLocked(FlightEntry& entry);

  const Clock& clock_;
  mutable std::mutex mu_;
  FlightRing ring_;
};

// The one-way time of a result for the ring: NIC stamps when both are there,
// else the application's; -1 when lost, failed or unknown.
std::int64_t OneWayNs(const ProbeResult& result);

}  // namespace hostmesh::agent::recorder
