#pragma once

// A ProbeTransport that stops sending on request while still receiving: what
// shutdown needs so the tracker can decide the probes already out without
// new ones joining them. Sends refused after Close() count as `refused`, so
// /metrics can keep them out of the transport's retry-later figure.

#include <cstdint>
#include <vector>

#include "agent/core/probe_transport.h"

namespace hostmesh::agent::app {

class GatedTransport final : public ProbeTransport {
 public:
  explicit GatedTransport(ProbeTransport& inner) : inner_(inner) {}

  void Close() { closed_ = true; }
  bool closed() const { return closed_; }
  // Sends from `nic` refused since Close().
  std::uint64_t refused(NicId nic) const { return nic < refused_.size() ? refused_[nic] : 0; }

  OpenResult OpenNic(NicId nic) override { return inner_.OpenNic(nic); }
  SendResult Send(const ProbeOrder& order, std::span<const std::uint8_t> payload) override {
    if (!closed_) return inner_.Send(order, payload);
    if (order.src >= refused_.size()) refused_.resize(order.src + 1, 0);
    ++refused_[order.src];
    SendResult result;
    result.status = SendStatus::kRetryLater;  // never left the host: no result, no timeout
    return result;
  }
  std::size_t Poll(std::vector<TransportEvent>& out, std::size_t max_events) override {
    return inner_.Poll(out, max_events);
  }
  int ReadyFd() const override { return inner_.ReadyFd(); }

 private:
  ProbeTransport& inner_;
  bool closed_ = false;
  std::vector<std::uint64_t> refused_;
};

}  // namespace hostmesh::agent::app
