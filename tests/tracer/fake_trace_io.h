#pragma once

// A TraceIo that answers from a scripted path in virtual time: each probe's
// reply (a real-format ICMP packet quoting the probe) is queued to arrive
// after the hop's delay; Receive and SleepUntil move the VirtualClock.

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "tracer/icmp_builder.h"
#include "tracer/icmp_packet.h"
#include "tracer/trace_io.h"

namespace hostmesh::tracer::testing {

struct FakeHop {
  Ipv4 address;
  bool silent = false;
  std::chrono::nanoseconds delay = std::chrono::microseconds{100};
  std::uint8_t type = 11;  // 11 time exceeded, 3 unreachable (with `code`)
  std::uint8_t code = 0;
};

using tracer::BuildIcmpError;

class FakeTraceIo : public TraceIo {
 public:
  explicit FakeTraceIo(VirtualClock& clock) : clock_(clock) {}

  // Switch hops by TTL; past them the destination answers Port Unreachable
  // unless `swallow`.
  std::vector<FakeHop> path;
  bool swallow = false;
  std::chrono::nanoseconds destination_delay = std::chrono::microseconds{200};
  std::size_t quote_payload_bytes = 1000;
  std::string open_error;
  std::string send_error;

  // Per source address, when set: that source's path instead of `path`
  // (sources cabled to different first-hop switches).
  std::map<Ipv4, std::vector<FakeHop>> paths_by_source;

  std::set<FiveTuple> opened;
  std::vector<MonoTime> sends;
  std::vector<int> ttls;
  std::vector<FiveTuple> sent_tuples;
  int receive_calls = 0;  // each a wait on the socket (a wake-up of the real thread)

  // Delivers `packet` at `at` whatever was sent.
  void Inject(MonoTime at, std::vector<std::uint8_t> packet) {
    pending_.emplace(at, std::move(packet));
  }

  std::string Open(const FiveTuple& tuple, const std::string& /*netdev*/) override {
    if (open_error.empty()) opened.insert(tuple);
    return open_error;
  }

  std::string Send(const FiveTuple& tuple, int ttl,
                   std::span<const std::uint8_t> payload) override {
    if (!send_error.empty()) return send_error;
    if (!opened.contains(tuple)) return "not open";
    const MonoTime now = clock_.MonotonicNow();
    sends.push_back(now);
    ttls.push_back(ttl);
    sent_tuples.push_back(tuple);
    const std::vector<FakeHop>& hops = PathOf(tuple);
    const auto i = static_cast<std::size_t>(ttl - 1);
    if (i < hops.size()) {
      const FakeHop& hop = hops[i];
      if (!hop.silent) {
        Inject(now + hop.delay, BuildIcmpError(hop.address, tuple.src, hop.type, hop.code, tuple,
                                               payload, quote_payload_bytes));
      }
    } else if (!swallow) {
      Inject(now + destination_delay,
             BuildIcmpError(tuple.dst, tuple.src, 3, 3, tuple, payload, quote_payload_bytes));
    }
    return {};
  }

  bool Receive(MonoTime deadline, std::vector<std::uint8_t>& packet,
               MonoTime& received_at) override {
    ++receive_calls;
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

  void SleepUntil(MonoTime until) override {
    if (until > clock_.MonotonicNow()) clock_.AdvanceTo(until);
  }

 private:
  const std::vector<FakeHop>& PathOf(const FiveTuple& tuple) const {
    const auto it = paths_by_source.find(tuple.src);
    return it == paths_by_source.end() ? path : it->second;
  }

  VirtualClock& clock_;
  std::multimap<MonoTime, std::vector<std::uint8_t>> pending_;
};

}  // namespace hostmesh::tracer::testing
