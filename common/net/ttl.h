#pragma once

// The longest path hostmesh traces and resolves, in hops: the tracer's probe
// tags encode the TTL in this many slots (tracer/probe_tag.h) and the path
// resolver holds this many hops (topology/path_resolver.h), so the agent's
// config refuses a traceroute.max_ttl above it instead of either clamping it
// without a word. A rail-optimized fabric of three switch tiers is 5 hops.

namespace hostmesh::net {

inline constexpr int kMaxTtl = 32;

}  // namespace hostmesh::net
