#pragma once

// A rail-optimized fleet made of numbers, for the analysis tests and the
// benchmark: H hosts x R rails x S spines, NIC r of every host on rail switch
// r, every rail switch linked to every spine. A probe between two NICs of one
// host climbs to the spine its 5-tuple hashes to and comes back down.
//   links: NIC (h, r) = h*R + r; rail r to spine s = H*R + r*S + s
//   switches: rail r = r; spine s = R + s
// Faults are injected per link, per NIC, per (link, source port) and per host;
// randomness is a seeded generator, time is whatever the caller passes.

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "analyzer/analysis/analysis.h"

namespace hostmesh::analysis::testing {

struct FleetShape {
  std::uint32_t hosts = 8;
  std::uint32_t rails = 4;
  std::uint32_t spines = 4;
  std::uint32_t ports = 16;  // source-port pool per NIC
};

struct Faults {
  std::map<LinkId, double> link_loss{};
  std::map<LinkId, double> uplink_loss{};  // rail-to-spine links, the way up only
  std::map<std::pair<HostId, NicId>, double> nic_loss{};
  std::set<std::pair<LinkId, std::uint16_t>> blackholes{};  // (link, source port)
  std::map<LinkId, std::int64_t> link_delay_ns{};
  std::map<HostId, std::int64_t> host_processing_ns{};
  std::set<HostId> absent{};
};

class SyntheticFleet {
 public:
  explicit SyntheticFleet(FleetShape shape, std::uint64_t seed = 1) : shape_(shape), rng_(seed) {}

  const FleetShape& shape() const { return shape_; }
  LinkId NicLink(HostId h, NicId r) const { return h * shape_.rails + r; }
  LinkId RailSpine(std::uint32_t rail, std::uint32_t spine) const {
    return shape_.hosts * shape_.rails + rail * shape_.spines + spine;
  }
  SwitchId RailSwitch(std::uint32_t rail) const { return rail; }
  SwitchId Spine(std::uint32_t spine) const { return shape_.rails + spine; }
  std::uint16_t Port(std::uint32_t i) const { return static_cast<std::uint16_t>(49152 + i); }
  std::size_t link_count() const { return RailSpine(shape_.rails, 0); }

  FabricMap Map() const {
    FabricMap map;
    map.switch_count = shape_.rails + shape_.spines;
    for (HostId h = 0; h < shape_.hosts; ++h) {
      for (NicId r = 0; r < shape_.rails; ++r) map.links.push_back({kUnknown, RailSwitch(r)});
    }
    for (std::uint32_t r = 0; r < shape_.rails; ++r) {
      for (std::uint32_t s = 0; s < shape_.spines; ++s)
        map.links.push_back({RailSwitch(r), Spine(s)});
    }
    return map;
  }

  // ECMP: the spine a 5-tuple hashes to.
  std::uint32_t SpineOf(HostId h, NicId a, NicId b, std::uint16_t port) const {
    std::uint64_t x =
        (std::uint64_t{h} << 40) ^ (std::uint64_t{a} << 32) ^ (std::uint64_t{b} << 24) ^ port;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return static_cast<std::uint32_t>(x % shape_.spines);
  }
  std::vector<LinkId> PathOf(HostId h, NicId a, NicId b, std::uint16_t port) const {
    const auto s = SpineOf(h, a, b, port);
    return {NicLink(h, a), RailSpine(a, s), RailSpine(b, s), NicLink(h, b)};
  }

  // How one 5-tuple's path is reported (TracePathsAs).
  enum class Traced { kWhole, kCutShort, kNot };

  // Path reports for every 5-tuple of the pools, each as how(h, a, b, i)
  // says: whole; cut short past its source's rail switch (every uplink of
  // that switch and every downlink into the destination's a candidate); or
  // none.
  template <typename How>
  void TracePathsAs(Analysis& analysis, std::int64_t time_ns, How&& how) const {
    for (HostId h = 0; h < shape_.hosts; ++h) {
      for (NicId a = 0; a < shape_.rails; ++a) {
        for (NicId b = 0; b < shape_.rails; ++b) {
          if (a == b) continue;
          for (std::uint32_t i = 0; i < shape_.ports; ++i) {
            const Traced traced = how(h, a, b, i);
            if (traced == Traced::kNot) continue;
            PathRecord p{h, a, b, Port(i), 4791, time_ns, PathOf(h, a, b, Port(i))};
            if (traced == Traced::kCutShort) {
              p.links[1] = p.links[2] = kUnknown;
              for (std::uint32_t s = 0; s < shape_.spines; ++s) {
                p.candidates.push_back({1, RailSpine(a, s)});
                p.candidates.push_back({2, RailSpine(b, s)});
              }
            }
            analysis.AddPath(p);
          }
        }
      }
    }
  }

  // Path reports for every 5-tuple of the pools; `traced` of them (by a fixed
  // pseudo-random choice per 5-tuple).
  void TracePaths(Analysis& analysis, std::int64_t time_ns, double traced = 1.0) const {
    TracePathsAs(analysis, time_ns, [traced](HostId h, NicId a, NicId b, std::uint32_t i) {
      const std::uint64_t pick = (h * 131u + a * 17u + b * 5u + i) * 2654435761u % 1000u;
      return static_cast<double>(pick) < traced * 1000 ? Traced::kWhole : Traced::kNot;
    });
  }

  // Every NIC of every present host probes a random other NIC of its host every
  // 100 ms over [start, start + seconds); calls sink(ProbeRecord) per result.
  template <typename Sink>
  void Probe(std::int64_t start_ns, int seconds, const Faults& faults, Sink&& sink) {
    std::uniform_int_distribution<std::uint32_t> other(1, shape_.rails - 1);
    std::uniform_int_distribution<std::uint32_t> port(0, shape_.ports - 1);
    std::uniform_real_distribution<double> u(0, 1);
    std::uniform_int_distribution<std::int64_t> jitter(0, 4000);
    std::uint64_t seq = 0;
    for (int tick = 0; tick < seconds * 10; ++tick) {
      const std::int64_t t = start_ns + std::int64_t{tick} * 100'000'000;
      for (HostId h = 0; h < shape_.hosts; ++h) {
        if (faults.absent.count(h)) continue;
        for (NicId a = 0; a < shape_.rails; ++a) {
          ProbeRecord r;
          r.host = h;
          r.src_nic = a;
          r.dst_nic = (a + other(rng_)) % shape_.rails;
          r.src_port = Port(port(rng_));
          r.dst_port = 4791;
          r.sequence = ++seq;
          r.send_time_ns = t + h * 1000 + a * 100;
          const auto path = PathOf(h, a, r.dst_nic, r.src_port);
          double pass = 1;
          std::int64_t delay = 0;
          if (auto it = faults.uplink_loss.find(path[1]); it != faults.uplink_loss.end())
            pass *= 1 - it->second;
          for (LinkId l : path) {
            if (auto it = faults.link_loss.find(l); it != faults.link_loss.end())
              pass *= 1 - it->second;
            if (faults.blackholes.count({l, r.src_port})) pass = 0;
            if (auto it = faults.link_delay_ns.find(l); it != faults.link_delay_ns.end())
              delay += it->second;
          }
          for (NicId n : {r.src_nic, r.dst_nic}) {
            if (auto it = faults.nic_loss.find({h, n}); it != faults.nic_loss.end())
              pass *= 1 - it->second;
          }
          r.t1_app_send_ns = r.send_time_ns;
          if (u(rng_) >= pass) {
            r.timeout = true;
          } else {
            std::int64_t proc = 20'000 + jitter(rng_) * 2;
            if (auto it = faults.host_processing_ns.find(h);
                it != faults.host_processing_ns.end()) {
              proc += it->second;
            }
            r.t2_nic_send_ns = r.t1_app_send_ns + 2'000;
            r.t3_nic_recv_ns = r.t2_nic_send_ns + 8'000 + jitter(rng_) + delay;
            r.t4_app_recv_ns = r.t3_nic_recv_ns + proc - 2'000;
          }
          sink(r);
        }
      }
    }
  }

  // Probes a whole window into the analysis.
  void ProbeInto(Analysis& analysis, std::int64_t start_ns, const Faults& faults,
                 int seconds = 20) {
    Probe(start_ns, seconds, faults, [&](const ProbeRecord& r) { analysis.AddResult(r); });
  }

 private:
  FleetShape shape_;
  std::mt19937_64 rng_;
};

}  // namespace hostmesh::analysis::testing
