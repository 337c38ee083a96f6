#pragma once

// The agent's ProbeTransport over the simulated fabric: a probe sent from one
// NIC of the host takes the path its 5-tuple hashes to, meets the faults on it
// and arrives, with the four timestamps a hardware-timestamping NIC gives, at
// the virtual time it would. The real Prober, Scheduler and Tracker run on top.

#include <cstdint>
#include <utility>
#include <vector>

#include "agent/core/payload_pool.h"
#include "agent/core/probe_transport.h"
#include "agent/core/rng.h"
#include "sim/host_clock.h"
#include "sim/packet_model.h"

namespace hostmesh::sim {

class SimTransport final : public agent::ProbeTransport {
 public:
  // `exposure` (the host's, kept across its agent's restarts; may be null)
  // counts the probes it sends that meet a fault (PacketModel::TallyExposure).
  SimTransport(std::uint32_t host, const PacketModel& model, const HostClock& clock,
               std::int64_t wall_offset_ns, std::uint64_t seed,
               std::vector<FaultExposure>* exposure = nullptr);

  agent::OpenResult OpenNic(agent::NicId nic) override;
  agent::SendResult Send(const agent::ProbeOrder& order,
                         std::span<const std::uint8_t> payload) override;
  std::size_t Poll(std::vector<agent::TransportEvent>& out, std::size_t max_events) override;
  // Keeps the payload buffers for the next sends (a few: as many as are in
  // flight at once).
  void Reclaim(std::vector<agent::TransportEvent>& handled) override;
  int ReadyFd() const override { return -1; }

  // When the next event becomes ready; MonoTime::max() when none is queued.
  MonoTime NextEventTime() const;

  std::uint64_t sent() const { return sent_; }
  std::uint64_t delivered() const { return delivered_; }

 private:
  struct Queued {
    std::int64_t at_ns;
    agent::TransportEvent event;
  };
  static bool Later(const Queued& a, const Queued& b) { return a.at_ns > b.at_ns; }

  std::uint32_t host_;
  const PacketModel& model_;
  const HostClock& clock_;
  std::int64_t wall_offset_ns_;
  agent::Rng rng_;
  std::vector<FaultExposure>* exposure_;
  std::vector<Queued> heap_;  // min-heap by at_ns
  // Enough for a turn's receives (a host's 8 NICs at 10 probes/s); more would
  // only hold memory.
  static constexpr std::size_t kMaxSparePayloads = 64;
  agent::PayloadPool payloads_{kMaxSparePayloads};
  std::uint64_t sent_ = 0;
  std::uint64_t delivered_ = 0;
};

}  // namespace hostmesh::sim
