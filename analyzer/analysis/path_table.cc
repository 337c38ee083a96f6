#include "analyzer/analysis/path_table.h"

#include <algorithm>
#include <cstring>

namespace hostmesh::analysis {

MiddleId PathTable::Intern(std::span<const LinkId> middle) {
  std::string bytes(middle.size() * sizeof(LinkId), '\0');
  if (!middle.empty()) std::memcpy(bytes.data(), middle.data(), bytes.size());
  const auto it = middle_ids_.find(bytes);
  if (it != middle_ids_.end()) return it->second;
  if (middles_.size() >= kMaxMiddles) return kNoPath;
  const auto id = static_cast<MiddleId>(middles_.size());
  middles_.emplace_back(middle.begin(), middle.end());
  middle_ids_.emplace(std::move(bytes), id);
  return id;
}

void PathTable::Add(const PathRecord& path) {
  const auto& links = path.links;
  for (LinkId l : links) {
    if (l != kUnknown) link_span_ = std::max<std::size_t>(link_span_, std::size_t{l} + 1);
  }
  if (links.size() < 2) return;  // not a NIC-to-NIC path: nothing to learn
  if (links.front() != kUnknown) {
    *nic_links_.Insert(std::uint64_t{path.host} * kMaxNics + path.src_nic, 0).first = links.front();
  }
  if (links.back() != kUnknown) {
    *nic_links_.Insert(std::uint64_t{path.host} * kMaxNics + path.dst_nic, 0).first = links.back();
  }
  const MiddleId id = Intern(std::span<const LinkId>(links).subspan(1, links.size() - 2));
  *paths_.Insert(Key(path.host, path.src_nic, path.dst_nic, path.src_port), id).first = id;
}

std::size_t PathTable::memory_bytes() const {
  std::size_t bytes = paths_.memory_bytes() + nic_links_.memory_bytes();
  for (const auto& m : middles_) bytes += m.capacity() * sizeof(LinkId) + 64;
  return bytes;
}

}  // namespace hostmesh::analysis
