#pragma once

// Payload buffers of received probes, kept for the next receives: a transport
// fills each kReceived event's payload into a spare buffer, and takes the
// buffers of handled events back (ProbeTransport::Reclaim), so a probe costs
// no heap allocation and free. Holds at most `max_spare` buffers: as many as
// one turn's events, whatever the rate.

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "agent/core/probe_transport.h"

namespace hostmesh::agent {

class PayloadPool {
 public:
  explicit PayloadPool(std::size_t max_spare) : max_spare_(max_spare) {}

  // `payload` holds `bytes` after, in a spare buffer when there is one.
  void Fill(std::vector<std::uint8_t>& payload, std::span<const std::uint8_t> bytes) {
    if (payload.capacity() == 0 && !spare_.empty()) {
      payload = std::move(spare_.back());
      spare_.pop_back();
    }
    payload.assign(bytes.begin(), bytes.end());
  }

  // Keeps the handled events' buffers, up to max_spare; `handled` is empty after.
  void Reclaim(std::vector<TransportEvent>& handled) {
    for (TransportEvent& event : handled) {
      if (event.payload.capacity() > 0 && spare_.size() < max_spare_) {
        spare_.push_back(std::move(event.payload));
      }
    }
    handled.clear();
  }

  std::size_t spare() const { return spare_.size(); }

 private:
  std::size_t max_spare_;
  std::vector<std::vector<std::uint8_t>> spare_;
};

}  // namespace hostmesh::agent
