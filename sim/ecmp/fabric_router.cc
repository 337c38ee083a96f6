#include "sim/ecmp/fabric_router.h"

#include "topology/ecmp.h"

namespace hostmesh::sim {

std::size_t FabricRouter::Route(topology::Ipv4 src, topology::Ipv4 dst, std::uint16_t sport,
                                std::uint16_t dport, const std::vector<std::uint8_t>* dead,
                                std::span<topology::LinkId> out) const {
  const std::vector<std::vector<topology::LinkId>>* paths;
  {
    std::lock_guard lock(mu_);
    auto [it, inserted] = cache_.try_emplace({src.value, dst.value});
    if (inserted) it->second = topology::EnumerateEcmpPaths(topo_, src, dst);
    paths = &it->second;
  }
  std::vector<const std::vector<topology::LinkId>*> alive;
  for (const auto& p : *paths) {
    bool ok = true;
    for (auto l : p) ok = ok && !(dead && (*dead)[l]);
    if (ok) alive.push_back(&p);
  }
  if (alive.empty()) return 0;
  std::uint64_t h = (std::uint64_t{src.value} * 31 + dst.value) * 1000003 + sport * 7919 + dport;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 32;
  const auto& p = *alive[h % alive.size()];
  for (std::size_t i = 0; i < p.size(); ++i) out[i] = p[i];
  return p.size();
}

}  // namespace hostmesh::sim
