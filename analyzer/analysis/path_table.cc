#include "analyzer/analysis/path_table.h"

#include <algorithm>
#include <cstring>

namespace hostmesh::analysis {

PathTable::PathTable(std::chrono::nanoseconds ttl, std::chrono::nanoseconds churn_hold,
                     std::uint32_t max_per_host)
    : tick_ns_(std::max<std::int64_t>(1, ttl.count() / kTicksPerTtl)),
      churn_hold_ns_(churn_hold.count()),
      max_per_host_(max_per_host) {}

namespace {

// The intern key: the links' bytes, then the candidates'; a churned part's
// has one byte more (the others are whole LinkIds and candidates, never that
// length), so a cut-short trace with the same candidates is another part.
std::string MiddleKey(std::span<const LinkId> links, std::span<const PathCandidate> candidates,
                      bool churned) {
  std::string bytes(links.size_bytes() + candidates.size_bytes() + (churned ? 1 : 0), '\0');
  if (!links.empty()) std::memcpy(bytes.data(), links.data(), links.size_bytes());
  if (!candidates.empty()) {
    std::memcpy(bytes.data() + links.size_bytes(), candidates.data(), candidates.size_bytes());
  }
  return bytes;
}

}  // namespace

MiddleId PathTable::Intern(std::span<const LinkId> middle,
                           std::span<const PathCandidate> candidates, bool churned) {
  std::string bytes = MiddleKey(middle, candidates, churned);
  const auto it = middle_ids_.find(bytes);
  if (it != middle_ids_.end()) return it->second;  // an orphan too: adopted back by Ref
  MiddleId id = kNoPath;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else if (middles_.size() < kMaxMiddles) {
    id = static_cast<MiddleId>(middles_.size());
    middles_.emplace_back();
  } else {
    return kNoPath;
  }
  middles_[id].links.assign(middle.begin(), middle.end());
  middles_[id].candidates.assign(candidates.begin(), candidates.end());
  middles_[id].churned = churned;
  middle_ids_.emplace(std::move(bytes), id);
  return id;
}

void PathTable::Ref(MiddleId id) {
  if (id != kNoPath) ++middles_[id].refs;
}

void PathTable::Unref(MiddleId id) {
  if (id == kNoPath) return;
  MiddleEntry& m = middles_[id];
  if (--m.refs > 0) return;
  // Windows opened since it was last held may count under it again.
  m.hold = kUnheld;
  if (!m.orphan_listed) {
    m.orphan_listed = true;
    orphans_.push_back(id);
  }
}

// The span of link ids and each end's NIC link; false when the path is not
// NIC to NIC (nothing more to learn from it).
bool PathTable::LearnNicLinks(const PathRecord& path) {
  const auto& links = path.links;
  for (LinkId l : links) {
    if (l != kUnknown) link_span_ = std::max<std::size_t>(link_span_, std::size_t{l} + 1);
  }
  if (links.size() < 2) return false;
  if (links.front() != kUnknown) {
    *nic_links_.Insert(std::uint64_t{path.host} * kMaxNics + path.src_nic, 0).first = links.front();
  }
  if (links.back() != kUnknown) {
    *nic_links_.Insert(std::uint64_t{path.host} * kMaxNics + path.dst_nic, 0).first = links.back();
  }
  return true;
}

// A 5-tuple not known yet: kept unless its host is at max_per_host_.
bool PathTable::AddNewTuple(HostId host, std::uint64_t key, std::span<const LinkId> middle) {
  if (host_size(host) >= max_per_host_) {
    ++refused_for_host_cap_;
    if (crowded_.size() <= host) crowded_.resize(std::size_t{host} + 1);
    if (!crowded_[host]) {
      crowded_[host] = true;
      ++crowded_count_;
    }
    return false;
  }
  const MiddleId id = Intern(middle, candidates_);
  Store(key, id);
  return id != kNoPath;
}

bool PathTable::Add(const PathRecord& path) {
  const auto& links = path.links;
  if (!LearnNicLinks(path)) return false;
  const auto middle = std::span<const LinkId>(links).subspan(1, links.size() - 2);
  // Candidates of the middle's positions, renumbered from its first link.
  candidates_.clear();
  for (const PathCandidate& c : path.candidates) {
    if (c.position >= 1 && c.position + 1 < links.size()) {
      candidates_.push_back({c.position - 1, c.link});
    }
  }
  const std::uint64_t key = Key(path.host, path.src_nic, path.dst_nic, path.src_port);
  const auto* known = paths_.Find(key);
  const auto churn = churn_.find(key);
  const MiddleId newest = churn != churn_.end() ? churn->second.newest
                          : known != nullptr    ? *known
                                                : kNoPath;
  if (newest == kNoPath) return AddNewTuple(path.host, key, middle);
  if (std::find(middle.begin(), middle.end(), kUnknown) != middle.end() &&
      Refines(middles_[newest], middle, candidates_)) {
    paths_.Touch(key, tick_);
    ++partial_kept_;
    return false;
  }
  const MiddleId id = Intern(middle, candidates_);
  if (id == kNoPath) return false;  // out of ids: the known path stays
  Ref(id);  // held while deciding: a new part nobody takes is orphaned, then freed
  bool changed = false;
  if (id == newest) {
    paths_.Touch(key, tick_);
  } else if (Refines(middles_[id], middles_[newest].links, middles_[newest].candidates)) {
    // More of the same route (a whole trace where a partial one was known).
    if (churn == churn_.end()) {
      Store(key, id);
    } else {
      Ref(id);
      Unref(churn->second.newest);
      churn->second.newest = id;
      const MiddleId merged = Merge(churn->second.previous, id);
      Store(key, merged == kNoPath ? id : merged);
    }
  } else {
    // Routing moved the 5-tuple: ambiguous between its last two paths a while.
    changed = true;
    ++route_changes_;
    if (churn_hold_ns_ <= 0) {
      Store(key, id);
      Unref(id);
      return true;
    }
    Churn& c = churn_[key];
    Ref(newest);
    Ref(id);
    Unref(c.previous);  // kNoPath for a fresh entry
    c.previous = newest;
    Unref(c.newest);
    c.newest = id;
    c.until_ns = now_ns_ + churn_hold_ns_;
    next_churn_expiry_ns_ = std::min(next_churn_expiry_ns_, c.until_ns);
    const MiddleId merged = Merge(c.previous, c.newest);
    Store(key, merged == kNoPath ? id : merged);
  }
  Unref(id);
  return changed;
}

void PathTable::Store(std::uint64_t key, MiddleId id) {
  Ref(id);  // before Unref of the old one: the same part must not pass through orphanhood
  auto [value, inserted] = paths_.Insert(key, id, tick_);
  if (!inserted) {
    Unref(*value);
    *value = id;
    return;
  }
  const HostId host = KeyHost(key);
  if (per_host_.size() <= host) per_host_.resize(std::size_t{host} + 1, 0);
  ++per_host_[host];
}

void PathTable::Forgotten(std::uint64_t key) {
  const HostId host = KeyHost(key);
  if (host >= per_host_.size() || per_host_[host] == 0) return;
  --per_host_[host];
  if (host >= crowded_.size() || !crowded_[host]) return;
  ++evicted_for_host_cap_;
  if (per_host_[host] <= max_per_host_ / 4 * 3) {  // room for a while, not one at a time
    crowded_[host] = false;
    --crowded_count_;
  }
}

std::vector<HostId> PathTable::crowded_hosts() const {
  std::vector<HostId> hosts;
  if (crowded_count_ == 0) return hosts;
  for (HostId h = 0; h < crowded_.size(); ++h) {
    if (crowded_[h]) hosts.push_back(h);
  }
  return hosts;
}

MiddleId PathTable::Merge(MiddleId a, MiddleId b) {
  if (a == kNoPath || b == kNoPath || middles_[a].links.size() != middles_[b].links.size()) {
    return kNoPath;
  }
  merged_links_.clear();
  merged_candidates_.clear();
  std::vector<LinkId> either;
  for (std::uint32_t i = 0; i < middles_[a].links.size(); ++i) {
    const LinkId la = middles_[a].links[i], lb = middles_[b].links[i];
    if (la != kUnknown && la == lb) {
      merged_links_.push_back(la);
      continue;
    }
    merged_links_.push_back(kUnknown);
    either.clear();
    bool any = false;  // a side that could be any link
    for (const MiddleId side : {a, b}) {
      const MiddleEntry& m = middles_[side];
      if (m.links[i] != kUnknown) {
        either.push_back(m.links[i]);
        continue;
      }
      const std::size_t listed = either.size();
      for (const PathCandidate& c : m.candidates) {
        if (c.position == i) either.push_back(c.link);
      }
      any = any || either.size() == listed;
    }
    if (any) continue;
    std::sort(either.begin(), either.end());
    either.erase(std::unique(either.begin(), either.end()), either.end());
    for (const LinkId l : either) merged_candidates_.push_back({i, l});
  }
  return Intern(merged_links_, merged_candidates_, true);
}

void PathTable::ExpireChurn() {
  if (now_ns_ < next_churn_expiry_ns_) return;
  next_churn_expiry_ns_ = std::numeric_limits<std::int64_t>::max();
  for (auto it = churn_.begin(); it != churn_.end();) {
    Churn& c = it->second;
    if (c.until_ns > now_ns_) {
      next_churn_expiry_ns_ = std::min(next_churn_expiry_ns_, c.until_ns);
      ++it;
      continue;
    }
    // No change for churn_hold: the newest path stands alone (its age kept).
    if (std::uint32_t* value = paths_.FindToChange(it->first)) {
      Ref(c.newest);
      Unref(*value);
      *value = c.newest;
    }
    Unref(c.previous);
    Unref(c.newest);
    it = churn_.erase(it);
  }
}

bool PathTable::Refines(const MiddleEntry& known, std::span<const LinkId> partial,
                        std::span<const PathCandidate> candidates) const {
  if (known.links.size() != partial.size()) return false;
  std::size_t known_unknown = 0, partial_unknown = 0;
  for (std::uint32_t i = 0; i < partial.size(); ++i) {
    const LinkId was = known.links[i];
    known_unknown += was == kUnknown;
    if (partial[i] != kUnknown) {
      if (was != partial[i]) return false;
      continue;
    }
    ++partial_unknown;
    if (was == kUnknown) continue;
    bool listed = false, any = false;
    for (const PathCandidate& c : candidates) {
      if (c.position != i) continue;
      any = true;
      listed = listed || c.link == was;
    }
    if (any && !listed) return false;
  }
  return known_unknown < partial_unknown;
}

void PathTable::AdvanceTo(std::int64_t now_ns) {
  if (!started_) {
    started_ = true;
    origin_ns_ = now_ns;
    now_ns_ = now_ns;
    return;
  }
  if (now_ns <= now_ns_) return;
  const std::int64_t elapsed = now_ns - now_ns_;
  now_ns_ = now_ns;
  ExpireChurn();
  const auto forget = [this](std::uint64_t key, std::uint32_t middle) {
    ++aged_out_;
    Forgotten(key);
    Unref(middle);
  };
  if (elapsed >= tick_ns_ * kTicksPerTtl) {
    // A jump longer than ttl (virtual time, a stalled caller): what was touched
    // before the previous call is stale; what was touched since carries the
    // previous tick and counts as touched now. The clock is re-based so ticks
    // move on by one and stay well inside the 2^16 the stamps hold.
    paths_.Sweep(paths_.capacity(), tick_, 0, forget);
    ++ticks_;
    origin_ns_ = now_ns_ - static_cast<std::int64_t>(ticks_) * tick_ns_;
    tick_ = static_cast<AgingMap::Tick>(ticks_);
    sweep_debt_ = 0;
    return;
  }
  ticks_ = static_cast<std::uint64_t>((now_ns_ - origin_ns_) / tick_ns_);
  tick_ = static_cast<AgingMap::Tick>(ticks_);
  // A full pass over the slots every kSweepTicks, in slices as time goes.
  sweep_debt_ += static_cast<double>(paths_.capacity()) * static_cast<double>(elapsed) /
                 static_cast<double>(tick_ns_ * kSweepTicks);
  sweep_debt_ = std::min(sweep_debt_, static_cast<double>(paths_.capacity()));
  const auto slots = static_cast<std::size_t>(sweep_debt_);
  if (slots == 0) return;
  sweep_debt_ -= static_cast<double>(slots);
  if (crowded_count_ == 0) {
    paths_.Sweep(slots, tick_, static_cast<AgingMap::Tick>(kTicksPerTtl), forget);
    return;
  }
  const auto max_age_of = [this](std::uint64_t key) {
    const HostId host = KeyHost(key);
    return static_cast<AgingMap::Tick>(host < crowded_.size() && crowded_[host] ? kCrowdedIdleTicks
                                                                                : kTicksPerTtl);
  };
  paths_.SweepBy(slots, tick_, max_age_of, forget);
}

void PathTable::HoldOrphans(std::int64_t newest_open_window_start) {
  for (MiddleId id : orphans_) {
    MiddleEntry& m = middles_[id];
    if (m.refs == 0 && m.hold == kUnheld) m.hold = newest_open_window_start;
  }
}

void PathTable::FreeOrphans(std::int64_t judged_before_ns) {
  std::size_t kept = 0;
  for (MiddleId id : orphans_) {
    MiddleEntry& m = middles_[id];
    if (m.refs > 0) {
      m.orphan_listed = false;  // adopted back
      continue;
    }
    if (m.hold == kUnheld || m.hold >= judged_before_ns) {
      orphans_[kept++] = id;
      continue;
    }
    middle_ids_.erase(MiddleKey(m.links, m.candidates, m.churned));
    m = MiddleEntry{};
    free_ids_.push_back(id);
    ++middles_freed_;
  }
  orphans_.resize(kept);
}

std::size_t PathTable::memory_bytes() const {
  std::size_t bytes = paths_.memory_bytes() + nic_links_.memory_bytes() +
                      per_host_.capacity() * sizeof(std::uint32_t) + crowded_.capacity() / 8 +
                      middles_.capacity() * sizeof(MiddleEntry) +
                      (free_ids_.capacity() + orphans_.capacity()) * sizeof(MiddleId) +
                      churn_.size() * (sizeof(Churn) + 32) + churn_.bucket_count() * sizeof(void*);
  for (const auto& m : middles_) {
    bytes += m.links.capacity() * sizeof(LinkId) + m.candidates.capacity() * sizeof(PathCandidate);
  }
  // The intern map: a node, a bucket and the key's bytes per fabric part.
  for (const auto& [key, id] : middle_ids_) bytes += 64 + key.capacity();
  return bytes;
}

}  // namespace hostmesh::analysis
