#include "analyzer/evidence/tuple_sampler.h"

#include <algorithm>
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

bool ByPath(const Target& t) {
  return t.kind == Target::Kind::kLink || t.kind == Target::Kind::kSwitch;
}

bool Touches(const analysis::FabricMap& fabric, LinkId link, const Target& t) {
  if (t.kind == Target::Kind::kLink) return link == t.id;
  if (link >= fabric.links.size()) return false;
  return fabric.links[link].lower == t.id || fabric.links[link].upper == t.id;
}

}  // namespace

void TupleSampler::Add(std::uint64_t owner, std::vector<Target> targets,
                       std::vector<std::uint32_t> limits) {
  Request r;
  r.owner = owner;
  limits.resize(targets.size(), 0);
  r.heaps.resize(targets.size());
  r.crossing.assign(targets.size(), 0);
  r.targets = std::move(targets);
  r.limits = std::move(limits);
  requests_.push_back(std::move(r));
  indexed_ = false;
}

void TupleSampler::Index(const analysis::FabricMap& fabric) {
  bits_.clear();
  for (std::size_t r = 0; r < requests_.size(); ++r) {
    for (std::size_t t = 0; t < requests_[r].targets.size(); ++t) {
      if (ByPath(requests_[r].targets[t]) && requests_[r].limits[t] > 0) bits_.emplace_back(r, t);
    }
  }
  words_ = (bits_.size() + 63) / 64;
  // NIC links are not in the fabric parts: only those a target touches (a
  // host's link, or the rail switch it ends on) are looked up per 5-tuple.
  nic_links_.clear();
  for (LinkId l = 0; l < fabric.links.size(); ++l) {
    if (fabric.links[l].lower != analysis::kUnknown) continue;
    std::vector<std::uint64_t> row(words_, 0);
    bool any = false;
    for (std::size_t k = 0; k < bits_.size(); ++k) {
      if (!Touches(fabric, l, requests_[bits_[k].first].targets[bits_[k].second])) continue;
      row[k / 64] |= 1ULL << (k % 64);
      any = true;
    }
    if (any) nic_links_.emplace(l, std::move(row));
  }
  row_of_.clear();
  rows_.clear();
  scratch_.assign(words_, 0);
  indexed_ = true;
}

const std::uint64_t* TupleSampler::RowOf(const PathTable& paths, const analysis::FabricMap& fabric,
                                         analysis::MiddleId middle) {
  if (middle >= row_of_.size()) row_of_.resize(std::size_t{middle} + 1, 0);
  if (row_of_[middle] == 0) {
    rows_.resize(rows_.size() + words_, 0);
    row_of_[middle] = static_cast<std::uint32_t>(rows_.size() / words_);
    std::uint64_t* row = rows_.data() + rows_.size() - words_;
    const auto mark = [&](LinkId l) {
      for (std::size_t k = 0; k < bits_.size(); ++k) {
        if (Touches(fabric, l, requests_[bits_[k].first].targets[bits_[k].second])) {
          row[k / 64] |= 1ULL << (k % 64);
        }
      }
    };
    for (const LinkId l : paths.Middle(middle)) {
      if (l != analysis::kUnknown) mark(l);
    }
    for (const analysis::PathCandidate& c : paths.Candidates(middle)) mark(c.link);
  }
  return rows_.data() + std::size_t{row_of_[middle] - 1} * words_;
}

void TupleSampler::Visit(const PathTable& paths, const analysis::FabricMap& fabric,
                         std::uint64_t key, analysis::MiddleId middle) {
  if (middle == PathTable::kNoPath) return;
  const std::uint64_t* row = RowOf(paths, fabric, middle);
  std::uint64_t any = 0;
  for (std::size_t w = 0; w < words_; ++w) any |= (scratch_[w] = row[w]);
  if (!nic_links_.empty()) {
    const analysis::HostId host = PathTable::KeyHost(key);
    for (const LinkId l : {paths.NicLink(host, PathTable::KeySrc(key)),
                           paths.NicLink(host, PathTable::KeyDst(key))}) {
      const auto it = nic_links_.find(l);
      if (it == nic_links_.end()) continue;
      for (std::size_t w = 0; w < words_; ++w) any |= (scratch_[w] |= it->second[w]);
    }
  }
  if (any == 0) return;
  const std::uint64_t hash = Mix(key);
  for (std::size_t w = 0; w < words_; ++w) {
    for (std::uint64_t b = scratch_[w]; b != 0; b &= b - 1) {
      const auto [r, t] = bits_[w * 64 + static_cast<std::size_t>(__builtin_ctzll(b))];
      Request& req = requests_[r];
      ++req.crossing[t];
      auto& heap = req.heaps[t];
      if (heap.size() < req.limits[t]) {
        heap.emplace(hash, key);
      } else if (hash < heap.top().first) {
        heap.pop();
        heap.emplace(hash, key);
      }
    }
  }
}

std::vector<TupleSampler::Done> TupleSampler::Step(const PathTable& paths,
                                                   const analysis::FabricMap& fabric,
                                                   std::size_t slots) {
  std::vector<Done> done;
  if (requests_.empty()) return done;
  if (!indexed_) Index(fabric);
  if (paths.middles_freed() != freed_seen_) {  // a part's id may name another path now
    freed_seen_ = paths.middles_freed();
    row_of_.clear();
    rows_.clear();
  }
  const std::size_t capacity = std::max<std::size_t>(paths.tuple_slots(), 1);
  for (Request& r : requests_) {
    if (!r.started) r.remaining = capacity;
    r.started = true;
  }
  if (cursor_ >= capacity) cursor_ = 0;
  const std::size_t n = std::min(std::max<std::size_t>(slots, 1), capacity - cursor_);
  if (words_ > 0) {
    paths.ForEachTupleInSlots(cursor_, cursor_ + n, [&](std::uint64_t key, analysis::MiddleId m) {
      Visit(paths, fabric, key, m);
    });
  }
  cursor_ += n;
  for (std::size_t r = 0; r < requests_.size();) {
    Request& req = requests_[r];
    req.remaining -= std::min(req.remaining, n);
    if (req.remaining > 0) {
      ++r;
      continue;
    }
    Done& d = done.emplace_back();
    d.owner = req.owner;
    d.samples.resize(req.targets.size());
    for (std::size_t t = 0; t < req.targets.size(); ++t) {
      d.samples[t].tuples = Drain(paths, req.heaps[t]);
      d.samples[t].crossing = req.crossing[t];
    }
    requests_.erase(requests_.begin() + static_cast<std::ptrdiff_t>(r));
    indexed_ = false;
  }
  return done;
}

// A target's sample, smallest hash first and each 5-tuple once, with its path.
std::vector<SampledTuple> TupleSampler::Drain(const PathTable& paths,
                                              std::priority_queue<HashedKey>& heap) {
  std::vector<HashedKey> kept;
  for (; !heap.empty(); heap.pop()) kept.push_back(heap.top());
  std::reverse(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());  // a repeat across a rehash
  std::vector<SampledTuple> out;
  for (const auto& [hash, key] : kept) {
    SampledTuple& t = out.emplace_back();
    t.key = key;
    const analysis::HostId host = PathTable::KeyHost(key);
    t.links.push_back(paths.NicLink(host, PathTable::KeySrc(key)));
    const analysis::MiddleId middle =
        paths.Lookup(host, PathTable::KeySrc(key), PathTable::KeyDst(key), PathTable::KeyPort(key));
    if (middle != PathTable::kNoPath) {
      for (const LinkId l : paths.Middle(middle)) t.links.push_back(l);
    }
    t.links.push_back(paths.NicLink(host, PathTable::KeyDst(key)));
  }
  return out;
}

std::vector<TargetSample> SampleTuples(const PathTable& paths, const analysis::FabricMap& fabric,
                                       std::span<const Target> targets,
                                       std::span<const std::uint32_t> limits) {
  TupleSampler sampler;
  sampler.Add(0, std::vector<Target>(targets.begin(), targets.end()),
              std::vector<std::uint32_t>(limits.begin(), limits.end()));
  for (;;) {
    std::vector<TupleSampler::Done> done = sampler.Step(paths, fabric, paths.tuple_slots());
    if (!done.empty()) return std::move(done.front().samples);
  }
}

}  // namespace hostmesh::analyzer::evidence
