#pragma once

// The tracer's I/O seam: send probes of a 5-tuple with a chosen TTL, receive
// ICMP packets, wait. The engine (trace_engine.h) drives it, several traces
// at once; tests put a fake behind it that answers from a scripted path in
// virtual time.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "tracer/ipv4.h"

namespace hostmesh::tracer {

class TraceIo {
 public:
  virtual ~TraceIo() = default;
  // Prepares sending with `tuple` (bound to `netdev` when not empty); several
  // 5-tuples may be open at once. Empty on success, else what failed.
  virtual std::string Open(const FiveTuple& tuple, const std::string& netdev) = 0;
  // One UDP datagram of the open `tuple` with IP TTL `ttl`. Empty on success.
  virtual std::string Send(const FiveTuple& tuple, int ttl,
                           std::span<const std::uint8_t> payload) = 0;
  // The next ICMP packet (whole IPv4 packet) and when it arrived; false when
  // none came before `deadline`.
  virtual bool Receive(MonoTime deadline, std::vector<std::uint8_t>& packet,
                       MonoTime& received_at) = 0;
  virtual void SleepUntil(MonoTime until) = 0;
};

}  // namespace hostmesh::tracer
