#pragma once

// Which probe of ours an ICMP error answers: the quoted 5-tuple must be the
// trace's, the quoted UDP length must decode to a (ttl, generation) of the
// current trace, and when the quote holds a tag's worth of payload the tag
// must be there and agree (probe_tag.h).

#include <cstdint>

#include "tracer/icmp_packet.h"
#include "tracer/ipv4.h"

namespace hostmesh::tracer {

enum class MatchVerdict : std::uint8_t {
  kMatched,  // answers the probe with `ttl` of this trace
  kForeign,  // another 5-tuple, or not a hostmesh probe, or another tracer's
  kStale,    // our 5-tuple, but an earlier trace of it (late reply)
};

struct Match {
  MatchVerdict verdict = MatchVerdict::kForeign;
  int ttl = 0;  // when matched
};

struct TraceIdentity {
  FiveTuple tuple;
  std::uint32_t generation = 0;
  std::uint32_t session = 0;
};

Match MatchReply(const IcmpError& reply, const TraceIdentity& trace);

}  // namespace hostmesh::tracer
