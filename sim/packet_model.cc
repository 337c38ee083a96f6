#include "sim/packet_model.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace hostmesh::sim {

double Uniform01(agent::Rng& rng) {
  return static_cast<double>(rng.Next() >> 11) * 0x1.0p-53;
}

std::int64_t Exponential(agent::Rng& rng, std::int64_t mean_ns) {
  if (mean_ns <= 0) return 0;
  const double u = 1.0 - Uniform01(rng);  // (0, 1]
  return static_cast<std::int64_t>(-std::log(u) * static_cast<double>(mean_ns));
}

PacketModel::PacketModel(const Fleet& fleet, const FaultSet& faults,
                         const ecmp::FabricRouter& router, LatencyModel latency)
    : fleet_(fleet), faults_(faults), router_(router), latency_(latency) {
  for (const FleetHost& h : fleet_.hosts()) {
    auto& nics = router_nic_.emplace_back();
    for (const Ipv4 ip : h.nic_ips) nics.push_back(router_.FindNic(ip));
  }
}

std::size_t PacketModel::Route(std::uint32_t host, std::uint32_t src_nic, std::uint32_t dst_nic,
                               std::uint16_t sport, std::uint16_t dport, PathLinks& out) const {
  const auto& nics = router_nic_[host];
  return router_.RouteNics(nics[src_nic], nics[dst_nic], sport, dport, dead_, out);
}

std::int64_t PacketModel::HopLatency(LinkId link, bool up, std::int64_t t, std::uint64_t packet,
                                     agent::Rng& rng) const {
  // A cable's length is a constant of the link: a stable per-link baseline.
  const std::int64_t cable =
      latency_.cable_spread_ns > 0
          ? static_cast<std::int64_t>((link * 2654435761u) %
                                      static_cast<std::uint32_t>(latency_.cable_spread_ns + 1))
          : 0;
  std::int64_t ns = latency_.per_hop_ns + cable + Exponential(rng, latency_.hop_jitter_mean_ns);
  if (latency_.spike_probability > 0 && Uniform01(rng) < latency_.spike_probability) {
    ns += Exponential(rng, latency_.spike_mean_ns);
  }
  // Queues: a latency fault's, then any moving congestion's, each wandering
  // and drawn from the packet's key, not the agent's random stream.
  const std::uint64_t directed = 2 * std::uint64_t{link} + (up ? 0 : 1);
  if (const std::int64_t added = faults_.LinkLatency(link, up, t); added > 0) {
    const double level = static_cast<double>(added) * WanderFactor(latency_.queue, directed, t);
    ns += QueueWait(latency_.queue, level, agent::Mix64(packet ^ directed));
  }
  if (moving_ != nullptr) {
    std::uint64_t queue = 0;
    if (const double level = moving_->LevelAt(link, up, t, &queue); level > 0) {
      ns += QueueWait(latency_.queue, level * WanderFactor(latency_.queue, queue, t),
                      agent::Mix64(packet ^ queue));
    }
  }
  return ns;
}

Passage PacketModel::Cross(std::uint32_t host, std::uint32_t src_nic, std::uint32_t dst_nic,
                           std::span<const LinkId> links, std::size_t count, std::size_t limit,
                           std::uint16_t sport, std::int64_t t, agent::Rng& rng) const {
  // One uniform decides where (if anywhere) the packet is lost: it survives
  // step k while the product of the pass probabilities so far stays above u.
  const double u = Uniform01(rng);
  double pass = 1.0 - faults_.RnicDrop(host, src_nic, t);
  Passage out;
  if (pass <= u) return out;
  const std::size_t half = count / 2;
  const std::uint64_t packet = agent::Mix64(
      static_cast<std::uint64_t>(t) ^
      agent::Mix64((std::uint64_t{host} << 24) ^ (std::uint64_t{src_nic} << 16) ^ sport));
  for (std::size_t i = 0; i < limit; ++i) {
    const LinkId link = links[i];
    const bool up = i < half;
    pass *= 1.0 - faults_.LinkDrop(link, up, sport, t);
    if (i + 1 < count) {
      const DeviceId sw = up ? fleet_.upper_device(link) : fleet_.lower_device(link);
      pass *= 1.0 - faults_.SwitchDrop(sw, t);
    } else {
      pass *= 1.0 - faults_.RnicDrop(host, dst_nic, t);
    }
    if (pass <= u) return out;
    out.one_way_ns += HopLatency(link, up, t, packet, rng);
    out.crossed = i + 1;
  }
  out.delivered = true;
  return out;
}

void PacketModel::TallyExposure(std::uint32_t host, std::uint32_t src_nic, std::uint32_t dst_nic,
                                std::span<const LinkId> links, std::size_t count, std::int64_t t,
                                std::vector<FaultExposure>& tally) const {
  if (tally.empty()) return;
  std::array<std::uint32_t, 2 * kMaxPathLinks + 2> met{};
  std::size_t n = 0;
  const auto meet = [&](const std::vector<std::uint32_t>* on, int up) {
    if (on == nullptr) return;
    for (const std::uint32_t i : *on) {
      const Fault& f = faults_.faults()[i];
      if (!HasLossLimit(f.kind) || !f.ActiveAt(t)) continue;
      if (up >= 0 && !AppliesInDirection(f, up != 0)) continue;
      if (n < met.size() && std::find(met.begin(), met.begin() + n, i) == met.begin() + n) {
        met[n++] = i;
      }
    }
  };
  meet(faults_.OnNic(host, src_nic), -1);
  meet(faults_.OnNic(host, dst_nic), -1);
  const std::size_t half = count / 2;
  double pass = 1.0;  // of the background alone
  for (std::size_t i = 0; i < count; ++i) {
    const bool up = i < half;
    pass *= 1.0 - faults_.background(links[i], up);
    meet(&faults_.OnLink(links[i]), up ? 1 : 0);
    if (i + 1 < count) {
      meet(&faults_.OnSwitch(up ? fleet_.upper_device(links[i]) : fleet_.lower_device(links[i])),
           -1);
    }
  }
  for (std::size_t k = 0; k < n && met[k] < tally.size(); ++k) {
    ++tally[met[k]].probes;
    tally[met[k]].background_sum += 1.0 - pass;
  }
}

bool PacketModel::ReplyGetsBack(std::span<const LinkId> links, std::size_t count, std::size_t hop,
                                std::int64_t t, agent::Rng& rng) const {
  const std::size_t half = count / 2;
  double pass = 1.0;
  for (std::size_t i = hop; i-- > 0;) {
    const bool forward_up = i < half;
    pass *= 1.0 - faults_.LinkDrop(links[i], !forward_up, 0, t);
  }
  return pass >= 1.0 || Uniform01(rng) < pass;
}

std::int64_t PacketModel::TxDelay(agent::Rng& rng) const {
  return latency_.tx_ns + Exponential(rng, latency_.host_jitter_mean_ns);
}

std::int64_t PacketModel::RxDelay(std::uint32_t host, std::int64_t t, agent::Rng& rng) const {
  std::int64_t ns = latency_.rx_ns + Exponential(rng, latency_.host_jitter_mean_ns);
  if (latency_.host_stall_probability > 0 && Uniform01(rng) < latency_.host_stall_probability) {
    ns += Exponential(rng, latency_.host_stall_mean_ns);
  }
  if (const std::int64_t added = faults_.ProcessingDelay(host, t); added > 0) {
    ns += added / 2 + static_cast<std::int64_t>(Uniform01(rng) * static_cast<double>(added));
  }
  return ns;
}

}  // namespace hostmesh::sim
