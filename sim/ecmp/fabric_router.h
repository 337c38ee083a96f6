#pragma once
// PLACEHOLDER until the kernel-exact router lands (helper branch `ecmp`).
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <vector>

#include "topology/topology.h"

namespace hostmesh::sim {

class FabricRouter {
 public:
  FabricRouter(const topology::Topology& topology, std::vector<std::uint32_t> seeds)
      : topo_(topology), seeds_(std::move(seeds)) {}
  std::size_t Route(topology::Ipv4 src, topology::Ipv4 dst, std::uint16_t sport,
                    std::uint16_t dport, const std::vector<std::uint8_t>* dead,
                    std::span<topology::LinkId> out) const;

 private:
  const topology::Topology& topo_;
  std::vector<std::uint32_t> seeds_;
  mutable std::mutex mu_;
  mutable std::map<std::pair<std::uint32_t, std::uint32_t>,
                   std::vector<std::vector<topology::LinkId>>>
      cache_;
};

}  // namespace hostmesh::sim
