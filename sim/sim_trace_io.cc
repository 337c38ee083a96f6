#include "sim/sim_trace_io.h"

#include <algorithm>

#include "tracer/icmp_builder.h"

namespace hostmesh::sim {
namespace {

constexpr std::uint8_t kTimeExceeded = 11;
// Linux quotes up to 576 bytes of the datagram in an ICMP error.
constexpr std::size_t kQuoteLimit = 576 - 20 - 8 - 20 - 8;

}  // namespace

SimTraceIo::SimTraceIo(std::uint32_t host, const PacketModel& model, IcmpModel icmp,
                       VirtualClock& clock, std::uint64_t seed)
    : host_(host), model_(model), icmp_(icmp), clock_(clock), rng_(seed) {
  const auto& switches = model_.fleet().hosts()[host_].switches;
  buckets_.resize(switches.size());
  for (std::size_t i = 0; i < switches.size(); ++i) {
    const double share =
        1.0 / std::max<std::uint32_t>(1, model_.fleet().hosts_reaching(switches[i]));
    buckets_[i].tokens = std::max(1.0, icmp_.switch_icmp_burst * share);
  }
}

std::string SimTraceIo::Open(const tracer::FiveTuple& tuple, const std::string& /*netdev*/) {
  tuple_ = tuple;
  pending_.clear();
  routed_ = false;
  const auto& ips = model_.fleet().hosts()[host_].nic_ips;
  const auto find = [&](std::uint32_t value, std::uint32_t* nic) {
    for (std::uint32_t i = 0; i < ips.size(); ++i) {
      if (ips[i].value == value) {
        *nic = i;
        return true;
      }
    }
    return false;
  };
  if (!find(tuple.src.value, &src_nic_) || !find(tuple.dst.value, &dst_nic_)) {
    return "5-tuple is not between two NICs of this host";
  }
  return {};
}

bool SimTraceIo::TakeToken(DeviceId sw, std::int64_t t) {
  const auto& switches = model_.fleet().hosts()[host_].switches;
  const auto it = std::lower_bound(switches.begin(), switches.end(), sw);
  if (it == switches.end() || *it != sw) return true;
  Bucket& b = buckets_[static_cast<std::size_t>(it - switches.begin())];
  const double share = 1.0 / std::max<std::uint32_t>(1, model_.fleet().hosts_reaching(sw));
  const double rate = icmp_.switch_icmp_per_second * share;
  const double burst = std::max(1.0, icmp_.switch_icmp_burst * share);
  b.tokens = std::min(burst, b.tokens + rate * static_cast<double>(t - b.at_ns) * 1e-9);
  b.at_ns = t;
  if (b.tokens < 1.0) return false;
  b.tokens -= 1.0;
  return true;
}

std::string SimTraceIo::Send(const tracer::FiveTuple& tuple, int ttl,
                             std::span<const std::uint8_t> payload) {
  if (tuple != tuple_) return "5-tuple not open";
  const std::int64_t t = clock_.MonotonicNow().time_since_epoch().count();
  if (!routed_) {
    // Routed at the first probe: the same path the trace's probes share.
    count_ = model_.Route(host_, src_nic_, dst_nic_, tuple_.sport, tuple_.dport, links_);
    routed_ = true;
  }
  if (count_ == 0 || ttl <= 0) return {};  // unroutable: every hop stays silent
  const auto hop = static_cast<std::size_t>(ttl);
  if (hop >= count_) {
    // Reaches (or would reach) our own NIC, whose receiver swallows it.
    model_.Cross(host_, src_nic_, dst_nic_, links_, count_, count_, tuple_.sport, t, rng_);
    return {};
  }
  const Passage p =
      model_.Cross(host_, src_nic_, dst_nic_, links_, count_, hop, tuple_.sport, t, rng_);
  if (!p.delivered) return {};
  const std::size_t half = count_ / 2;
  const LinkId in_link = links_[hop - 1];
  const bool up = hop - 1 < half;
  const DeviceId sw =
      up ? model_.fleet().upper_device(in_link) : model_.fleet().lower_device(in_link);
  if (!TakeToken(sw, t)) {
    ++rate_limited_;
    return {};
  }
  if (!model_.ReplyGetsBack(links_, count_, hop, t, rng_)) return {};
  const std::int64_t rtt = 2 * p.one_way_ns + Exponential(rng_, icmp_.switch_cpu_ns);
  const topology::Ipv4 from = model_.fleet().IngressAddress(in_link, up);
  pending_.emplace(AtNs(t + rtt), tracer::BuildIcmpError(from, tuple_.src, kTimeExceeded, 0, tuple_,
                                                         payload, kQuoteLimit));
  return {};
}

bool SimTraceIo::Receive(MonoTime deadline, std::vector<std::uint8_t>& packet,
                         MonoTime& received_at) {
  if (pending_.empty() || pending_.begin()->first > deadline) {
    SleepUntil(deadline);
    return false;
  }
  auto node = pending_.extract(pending_.begin());
  SleepUntil(node.key());
  received_at = clock_.MonotonicNow();
  packet = std::move(node.mapped());
  return true;
}

void SimTraceIo::SleepUntil(MonoTime until) {
  if (until > clock_.MonotonicNow()) clock_.AdvanceTo(until);
}

}  // namespace hostmesh::sim
