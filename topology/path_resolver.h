#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/net/ttl.h"
#include "topology/topology.h"

namespace hostmesh::topology {

// One traceroute hop: the address that answered at that TTL, or nullopt when
// the hop stayed silent (a silent hop is unknown, not a drop).
using Hop = std::optional<Ipv4>;

enum class PathStatus : std::uint8_t {
  kOk,            // every link known (from a hop, or the only choice the graph left)
  kAmbiguous,     // missing hops leave several choices: see candidates
  kInconsistent,  // the hops contradict the graph: see problem
};
std::string_view PathStatusName(PathStatus status);

struct LinkCandidates {
  size_t position = 0;  // index into ResolvedPath::links
  std::vector<LinkId> links{};
};

struct ResolvedPath {
  PathStatus status = PathStatus::kInconsistent;
  // Source NIC to destination NIC in order, NIC links included; kNone where
  // ambiguous. Empty when inconsistent before the length was known.
  std::vector<LinkId> links{};
  std::vector<LinkCandidates> candidates{};  // one entry per ambiguous position
  int filled = 0;                            // positions known from the graph, not a hop
  std::string problem{};                     // why, when inconsistent
  // The trace was cut short: the links after its last answer are the graph's
  // shortest continuation (ResolveTruncated), not what the probes crossed.
  bool truncated = false;

  // Inconsistent and empty, keeping the buffers.
  void Clear() {
    status = PathStatus::kInconsistent;
    links.clear();
    candidates.clear();
    filled = 0;
    problem.clear();
    truncated = false;
  }
};

// Maps a probe's traceroute onto the fabric. `hops` are the answers for TTL
// 1..n: every switch on the way, ingress addresses (so each names a link); a
// final answer from the destination NIC itself may be included or not. Missing
// hops are filled when the graph leaves one choice, and only then.
class PathResolver {
 public:
  explicit PathResolver(const Topology& topology) : topo_(topology) {}

  ResolvedPath Resolve(Ipv4 src_nic, Ipv4 dst_nic, std::span<const Hop> hops) const {
    ResolvedPath out;
    Resolve(src_nic, dst_nic, hops, &out);
    return out;
  }
  // The same, reusing out's buffers (the analyzer resolves every path report).
  void Resolve(Ipv4 src_nic, Ipv4 dst_nic, std::span<const Hop> hops, ResolvedPath* out) const;

  // A trace cut short (a gray link eats the probes that would cross it):
  // `prefix` holds the hops up to its last answer, and how many switches
  // follow is unknown. ECMP routes on shortest paths, so the path goes on by
  // the fewest further switches (at most max_more) for which the hops resolve;
  // positions several walks fit stay kNone. Sets out->truncated.
  void ResolveTruncated(Ipv4 src_nic, Ipv4 dst_nic, std::span<const Hop> prefix, size_t max_more,
                        ResolvedPath* out) const;

  const Topology& topology() const { return topo_; }

  static constexpr size_t kMaxHops = net::kMaxTtl;
  // How many more switches a trace cut short is continued by, at most
  // (ResolveTruncated's max_more, as the analyzer calls it).
  static constexpr size_t kMaxContinuation = 8;
  // Beyond this many ways to fill one gap the candidates are those of the first ones.
  static constexpr size_t kMaxWalks = 4096;

 private:
  // Fills the unknown positions first..last of out->links by walking the switch graph.
  void FillGap(size_t first, size_t last, const DeviceId* from, const DeviceId* into,
               ResolvedPath* out) const;

  const Topology& topo_;
};

// The hop addresses a traceroute along `path` (NIC link to NIC link) would see:
// each switch's ingress address. For tests, benchmarks and simulators.
std::vector<Hop> ExpectedHops(const Topology& topology, std::span<const LinkId> path, Ipv4 src_nic);

}  // namespace hostmesh::topology
