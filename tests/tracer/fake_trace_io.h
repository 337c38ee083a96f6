#pragma once

// A TraceIo that answers from a scripted path in virtual time: each probe's
// reply (a real-format ICMP packet quoting the probe) is queued to arrive
// after the hop's delay; Receive and SleepUntil move the VirtualClock.

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/base/clock.h"
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

// An ICMP error from `from` to `to` quoting an IPv4/UDP datagram of `tuple`
// with `payload`, of which `quote_payload_bytes` are quoted.
inline std::vector<std::uint8_t> BuildIcmpError(Ipv4 from, Ipv4 to, std::uint8_t type,
                                                std::uint8_t code, const FiveTuple& tuple,
                                                std::span<const std::uint8_t> payload,
                                                std::size_t quote_payload_bytes) {
  const std::size_t quoted = std::min(quote_payload_bytes, payload.size());
  std::vector<std::uint8_t> p(20 + 8 + 20 + 8 + quoted, 0);
  const auto put16 = [&](std::size_t at, std::uint32_t v) {
    p[at] = static_cast<std::uint8_t>(v >> 8);
    p[at + 1] = static_cast<std::uint8_t>(v);
  };
  const auto put32 = [&](std::size_t at, std::uint32_t v) {
    put16(at, v >> 16);
    put16(at + 2, v & 0xFFFF);
  };
  p[0] = 0x45;
  put16(2, static_cast<std::uint32_t>(p.size()));
  p[8] = 64;
  p[9] = 1;
  put32(12, from.value);
  put32(16, to.value);
  p[20] = type;
  p[21] = code;
  p[28] = 0x45;
  put16(30, static_cast<std::uint32_t>(20 + 8 + payload.size()));
  p[36] = 1;
  p[37] = tuple.protocol;
  put32(40, tuple.src.value);
  put32(44, tuple.dst.value);
  put16(48, tuple.sport);
  put16(50, tuple.dport);
  put16(52, static_cast<std::uint32_t>(8 + payload.size()));
  std::copy_n(payload.begin(), quoted, p.begin() + 56);
  put16(10, InternetChecksum(std::span(p).first(20)));
  put16(22, InternetChecksum(std::span(p).subspan(20)));
  return p;
}

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

  std::vector<MonoTime> sends;
  std::vector<int> ttls;

  // Delivers `packet` at `at` whatever was sent.
  void Inject(MonoTime at, std::vector<std::uint8_t> packet) {
    pending_.emplace(at, std::move(packet));
  }

  std::string Open(const FiveTuple& tuple, const std::string& /*netdev*/) override {
    tuple_ = tuple;
    return open_error;
  }

  std::string Send(int ttl, std::span<const std::uint8_t> payload) override {
    if (!send_error.empty()) return send_error;
    const MonoTime now = clock_.MonotonicNow();
    sends.push_back(now);
    ttls.push_back(ttl);
    const auto i = static_cast<std::size_t>(ttl - 1);
    if (i < path.size()) {
      const FakeHop& hop = path[i];
      if (!hop.silent) {
        Inject(now + hop.delay, BuildIcmpError(hop.address, tuple_.src, hop.type, hop.code, tuple_,
                                               payload, quote_payload_bytes));
      }
    } else if (!swallow) {
      Inject(now + destination_delay,
             BuildIcmpError(tuple_.dst, tuple_.src, 3, 3, tuple_, payload, quote_payload_bytes));
    }
    return {};
  }

  bool Receive(MonoTime deadline, std::vector<std::uint8_t>& packet,
               MonoTime& received_at) override {
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
  VirtualClock& clock_;
  FiveTuple tuple_;
  std::multimap<MonoTime, std::vector<std::uint8_t>> pending_;
};

}  // namespace hostmesh::tracer::testing
