#include "analyzer/evidence/tuple_sampler.h"

#include <algorithm>
#include <queue>
#include <unordered_map>
#include <utility>

namespace hostmesh::analyzer::evidence {

namespace {

using analysis::LinkId;
using analysis::PathTable;

std::uint64_t Mix(std::uint64_t x) {  // splitmix64's finalizer
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

using HashedKey = std::pair<std::uint64_t, std::uint64_t>;  // (hash, 5-tuple key)

bool Touches(const analysis::FabricMap& fabric, LinkId link, const Target& t) {
  if (t.kind == Target::Kind::kLink) return link == t.id;
  if (link >= fabric.links.size()) return false;
  return fabric.links[link].lower == t.id || fabric.links[link].upper == t.id;
}

// The links a fabric part may be: its known links and its candidates'.
template <typename Visit>
void ForEachLink(const PathTable& paths, analysis::MiddleId middle, Visit&& visit) {
  for (const LinkId l : paths.Middle(middle)) {
    if (l != analysis::kUnknown) visit(l);
  }
  for (const analysis::PathCandidate& c : paths.Candidates(middle)) visit(c.link);
}

// A target's sample, smallest hash first, with each 5-tuple's path.
std::vector<SampledTuple> Drain(const PathTable& paths, std::priority_queue<HashedKey>& heap) {
  std::vector<HashedKey> kept;
  for (; !heap.empty(); heap.pop()) kept.push_back(heap.top());
  std::reverse(kept.begin(), kept.end());
  std::vector<SampledTuple> out;
  for (const auto& [hash, key] : kept) {
    SampledTuple& t = out.emplace_back();
    t.key = key;
    const analysis::HostId host = PathTable::KeyHost(key);
    t.links.push_back(paths.NicLink(host, PathTable::KeySrc(key)));
    const analysis::MiddleId middle =
        paths.Lookup(host, PathTable::KeySrc(key), PathTable::KeyDst(key), PathTable::KeyPort(key));
    for (const LinkId l : paths.Middle(middle)) t.links.push_back(l);
    t.links.push_back(paths.NicLink(host, PathTable::KeyDst(key)));
  }
  return out;
}

}  // namespace

std::vector<TargetSample> SampleTuples(const PathTable& paths, const analysis::FabricMap& fabric,
                                       std::span<const Target> targets,
                                       std::span<const std::uint32_t> limits) {
  std::vector<TargetSample> out(targets.size());
  std::vector<std::size_t> fabric_targets;  // links and switches
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const bool by_path =
        targets[i].kind == Target::Kind::kLink || targets[i].kind == Target::Kind::kSwitch;
    if (by_path && i < limits.size() && limits[i] > 0) fabric_targets.push_back(i);
  }
  if (fabric_targets.empty()) return out;
  const std::size_t words = (fabric_targets.size() + 63) / 64;

  // Which targets each fabric part crosses, worked out once per part.
  std::unordered_map<analysis::MiddleId, std::vector<std::uint64_t>> crosses;
  const auto masks_of = [&](analysis::MiddleId middle) -> const std::vector<std::uint64_t>& {
    auto [it, fresh] = crosses.try_emplace(middle);
    if (fresh) {
      it->second.assign(words, 0);
      ForEachLink(paths, middle, [&](LinkId l) {
        for (std::size_t k = 0; k < fabric_targets.size(); ++k) {
          if (Touches(fabric, l, targets[fabric_targets[k]]))
            it->second[k / 64] |= 1ULL << (k % 64);
        }
      });
    }
    return it->second;
  };
  std::vector<std::uint64_t> nic_masks(words);
  const auto nic_link_masks = [&](std::uint64_t key) {
    std::fill(nic_masks.begin(), nic_masks.end(), 0);
    for (const LinkId l : {paths.NicLink(PathTable::KeyHost(key), PathTable::KeySrc(key)),
                           paths.NicLink(PathTable::KeyHost(key), PathTable::KeyDst(key))}) {
      if (l == analysis::kUnknown) continue;
      for (std::size_t k = 0; k < fabric_targets.size(); ++k) {
        if (Touches(fabric, l, targets[fabric_targets[k]])) nic_masks[k / 64] |= 1ULL << (k % 64);
      }
    }
  };

  // Per target a max-heap of (hash, key): the k smallest hashes seen.
  std::vector<std::priority_queue<HashedKey>> heaps(fabric_targets.size());
  paths.ForEachTuple([&](std::uint64_t key, analysis::MiddleId middle) {
    if (middle == PathTable::kNoPath) return;
    const std::vector<std::uint64_t>& masks = masks_of(middle);
    nic_link_masks(key);
    const std::uint64_t hash = Mix(key);
    for (std::size_t w = 0; w < words; ++w) {
      for (std::uint64_t bits = masks[w] | nic_masks[w]; bits != 0; bits &= bits - 1) {
        const std::size_t k = w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
        const std::size_t t = fabric_targets[k];
        ++out[t].crossing;
        auto& heap = heaps[k];
        if (heap.size() < limits[t]) {
          heap.emplace(hash, key);
        } else if (hash < heap.top().first) {
          heap.pop();
          heap.emplace(hash, key);
        }
      }
    }
  });

  for (std::size_t k = 0; k < fabric_targets.size(); ++k) {
    out[fabric_targets[k]].tuples = Drain(paths, heaps[k]);
  }
  return out;
}

}  // namespace hostmesh::analyzer::evidence
