#pragma once

// One turn of the agent's probe loop, with every piece injected: the
// scheduler says what is due, the codec builds the payload, the transport
// sends and reports, the tracker decides fates. No sleeping and no fds here:
// the I/O loop waits until RunOnce's answer or the transport's ReadyFd, then
// calls RunOnce again. Tests and the simulator drive it in virtual time.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "agent/core/probe_codec.h"
#include "agent/core/probe_transport.h"
#include "agent/core/scheduler.h"
#include "agent/core/tracker.h"
#include "common/base/clock.h"

namespace hostmesh::agent {

struct ProberOptions {
  std::uint32_t payload_bytes = kDefaultProbePayloadBytes;
  std::uint64_t boot_id = 0;  // random per agent start; stamped into every probe
  // Bounds one turn's receive work so a flood cannot starve sending.
  std::size_t max_events_per_turn = 4096;
};

// Per local NIC: what the tracker cannot see because it never became a probe.
struct ProberNicCounters {
  std::uint64_t send_retry_later = 0;  // transport queue full: the probe was not sent
  std::uint64_t send_errors = 0;       // hard send failures (reported as timeouts)
  // Payloads received on this NIC by decode outcome; everything but kOk was
  // rejected before the tracker.
  std::array<std::uint64_t, kDecodeStatusCount> received{};

  std::uint64_t received_with(DecodeStatus status) const {
    return received[static_cast<std::size_t>(status)];
  }
};

class Prober {
 public:
  // The references must outlive the prober. Throws std::invalid_argument if
  // payload_bytes is not a valid probe size (startup only).
  Prober(Scheduler& scheduler, Tracker& tracker, ProbeTransport& transport, const Clock& clock,
         ProberOptions options);

  // Handles the transport's ready events, sends the probes due, emits the
  // results whose deadline has come. Returns when to run again at the latest.
  // `events_ready` false: the caller's wait ended with the transport's
  // ReadyFd not ready, so the transport is not polled before the sends
  // (a system call that finds nothing, once per probe round) unless a probe's
  // deadline has come.
  MonoTime RunOnce(bool events_ready = true);

  // For shutdown: no new probes from now on, while receives and timeouts go on
  // so the tracker can settle the probes already out (no sequence gaps, no
  // refused sends to explain away).
  void StopSending() { sending_ = false; }
  bool sending() const { return sending_; }

  const ProberNicCounters& nic_counters(NicId nic) const { return nic_counters_.at(nic); }

 private:
  // One Poll of the transport; true when it filled the turn's budget.
  bool HandleEvents(MonoTime now);
  bool DeadlineCome(MonoTime now) const;
  void HandleEvent(const TransportEvent& event, MonoTime now);
  // True when some probe was handed to the transport.
  bool SendDue(MonoTime now);

  Scheduler& scheduler_;
  Tracker& tracker_;
  ProbeTransport& transport_;
  const Clock& clock_;
  ProberOptions options_;
  bool sending_ = true;
  std::vector<ProberNicCounters> nic_counters_;
  // Reused every turn: the steady state allocates nothing but received payloads.
  std::vector<ProbeOrder> orders_;
  std::vector<TransportEvent> events_;
  std::vector<std::uint8_t> payload_;
};

}  // namespace hostmesh::agent
