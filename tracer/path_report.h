#pragma once

// What the continuous tracer hands to the uploader (proto PathReport, one to
// one), and when two traces of a 5-tuple disagree about its path.

#include <cstdint>
#include <vector>

#include "common/base/clock.h"
#include "tracer/trace_types.h"

namespace hostmesh::tracer {

struct PathReport {
  FiveTuple tuple;
  std::uint32_t src_nic = 0;
  std::uint32_t dst_nic = 0;
  std::vector<Hop> hops;  // by ttl; silent hops have a zero address
  bool reached_destination = false;
  bool changed = false;  // differs from the previous path of this 5-tuple
  WallTime time{};
};

// True when the traces say different things about the path: a TTL where both
// have an address and the addresses differ, the destination reached at
// different TTLs, or a refusal (Destination Unreachable) in one and not at the
// same hop in the other. A silent hop disagrees with nothing: it is unknown.
bool PathsDiffer(const std::vector<Hop>& a, const std::vector<Hop>& b);

// `newer`, with its silent hops filled from `older` where `older` knew them
// and the two do not differ: the best current knowledge of the path.
std::vector<Hop> MergeKnownHops(const std::vector<Hop>& older, const std::vector<Hop>& newer);

}  // namespace hostmesh::tracer
