#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "topology/topology.h"

namespace hostmesh::topology {

// Every equal-cost path between two NICs: the shortest ones through switches
// (hosts never forward), NIC link to NIC link, as ECMP would spread 5-tuples
// over them. Empty when an address is not a linked NIC. Stops after `limit`.
std::vector<std::vector<LinkId>> EnumerateEcmpPaths(const Topology& topology, Ipv4 src_nic,
                                                    Ipv4 dst_nic, size_t limit = 1 << 20);

// Which links the paths seen in a window crossed, and which no path crossed.
class CoverageCounter {
 public:
  explicit CoverageCounter(const Topology& topology) : crossings_(topology.links().size()) {}

  // A resolved path; kNone entries (ambiguous positions) are skipped.
  void Add(std::span<const LinkId> path);
  void Clear();

  std::uint64_t crossings(LinkId link) const { return crossings_[link]; }
  size_t paths() const { return paths_; }

  struct Summary {
    std::vector<LinkId> crossed;
    std::vector<LinkId> never_crossed;
    double covered_fraction = 0;  // crossed / all
  };
  Summary Summarize() const;

 private:
  std::vector<std::uint64_t> crossings_;
  size_t paths_ = 0;
};

}  // namespace hostmesh::topology
