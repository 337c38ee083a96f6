#include "sim/sim_transport.h"

#include <algorithm>
#include <array>

namespace hostmesh::sim {

SimTransport::SimTransport(std::uint32_t host, const PacketModel& model, const HostClock& clock,
                           std::int64_t wall_offset_ns, std::uint64_t seed,
                           std::vector<FaultExposure>* exposure)
    : host_(host),
      model_(model),
      clock_(clock),
      wall_offset_ns_(wall_offset_ns),
      rng_(seed),
      exposure_(exposure) {}

agent::OpenResult SimTransport::OpenNic(agent::NicId nic) {
  agent::OpenResult out;
  out.ok = nic < model_.fleet().hosts()[host_].nic_ips.size();
  if (!out.ok) out.error = "no such NIC in the simulated host";
  out.capabilities.send_timestamps = agent::TimestampSource::kHardware;
  out.capabilities.recv_timestamps = agent::TimestampSource::kHardware;
  return out;
}

agent::SendResult SimTransport::Send(const agent::ProbeOrder& order,
                                     std::span<const std::uint8_t> payload) {
  const std::int64_t t = clock_.ns();
  const std::int64_t wall = t + wall_offset_ns_;
  agent::SendResult out;
  out.status = agent::SendStatus::kOk;
  out.app_send = {wall, agent::TimestampSource::kUser};
  const std::int64_t nic_send = wall + model_.TxDelay(rng_);
  out.nic_send = {nic_send, agent::TimestampSource::kHardware};
  ++sent_;
  // A NIC whose port is down cannot send (ENETDOWN under UDP, an error
  // completion under verbs): the agent reports a send failure, not a drop.
  if (model_.faults().RnicPortDown(host_, order.src, t)) {
    out.status = agent::SendStatus::kFailed;
    return out;
  }

  PathLinks links{};
  const std::size_t count =
      model_.Route(host_, order.src, order.dst, order.src_port, order.dst_port, links);
  if (count == 0) return out;  // no route: lost like a drop
  if (exposure_ != nullptr) {
    model_.TallyExposure(host_, order.src, order.dst, links, count, t, *exposure_);
  }
  const Passage p =
      model_.Cross(host_, order.src, order.dst, links, count, count, order.src_port, t, rng_);
  if (!p.delivered) return out;
  ++delivered_;
  const std::int64_t nic_recv = nic_send + p.one_way_ns;
  const std::int64_t app_recv = nic_recv + model_.RxDelay(host_, t, rng_);
  Queued q;
  q.at_ns = app_recv - wall_offset_ns_;
  q.event.kind = agent::TransportEvent::Kind::kReceived;
  q.event.nic = order.dst;
  q.event.nic_time = {nic_recv, agent::TimestampSource::kHardware};
  q.event.app_time = {app_recv, agent::TimestampSource::kUser};
  payloads_.Fill(q.event.payload, payload);
  heap_.push_back(std::move(q));
  std::push_heap(heap_.begin(), heap_.end(), Later);
  return out;
}

std::size_t SimTransport::Poll(std::vector<agent::TransportEvent>& out, std::size_t max_events) {
  const std::int64_t now = clock_.ns();
  std::size_t n = 0;
  while (n < max_events && !heap_.empty() && heap_.front().at_ns <= now) {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    out.push_back(std::move(heap_.back().event));
    heap_.pop_back();
    ++n;
  }
  return n;
}

void SimTransport::Reclaim(std::vector<agent::TransportEvent>& handled) {
  payloads_.Reclaim(handled);
}

MonoTime SimTransport::NextEventTime() const {
  return heap_.empty() ? MonoTime::max() : AtNs(heap_.front().at_ns);
}

}  // namespace hostmesh::sim
