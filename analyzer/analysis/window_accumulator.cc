#include "analyzer/analysis/window_accumulator.h"

#include <algorithm>
#include <limits>

namespace hostmesh::analysis {
namespace {

// a - b, saturated at the int64 ends. Timestamps come from agents and are
// not bounded at ingest (yet): a difference of two extreme ones is a bogus
// latency either way, but must not be signed overflow.
std::int64_t SaturatingSub(std::int64_t a, std::int64_t b) {
  std::int64_t d = 0;
  if (__builtin_sub_overflow(a, b, &d)) {
    return b < 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  }
  return d;
}

}  // namespace

PairCounts& HostWindow::Pair(NicId src, NicId dst) {
  const NicId need = std::max(src, dst) + 1;
  if (need > nics) {
    std::vector<PairCounts> grown(std::size_t{need} * need);
    for (NicId s = 0; s < nics; ++s) {
      for (NicId d = 0; d < nics; ++d) grown[s * need + d] = pairs[s * nics + d];
    }
    pairs.swap(grown);
    nics = need;
  }
  return pairs[src * nics + dst];
}

UntracedTuples::Counts* UntracedTuples::At(std::uint64_t key) {
  if (keys.size() >= kMaxTuples) {
    const auto* pos = index.Find(key);
    return pos ? &counts[*pos] : nullptr;
  }
  auto [pos, inserted] = index.Insert(key, static_cast<std::uint32_t>(keys.size()));
  if (inserted) {
    keys.push_back(key);
    counts.emplace_back();
  }
  return &counts[*pos];
}

void WindowAccumulator::AddSendFailure(HostId host, NicId nic) {
  if (host >= hosts_.size()) hosts_.resize(std::size_t{host} + 1);
  std::vector<std::uint32_t>& failures = hosts_[host].send_failures;
  if (nic >= failures.size()) failures.resize(std::size_t{nic} + 1, 0);
  ++failures[nic];
}

void WindowAccumulator::Add(const ProbeRecord& r, MiddleId middle, int rail) {
  ++results_;
  if (r.host >= hosts_.size()) hosts_.resize(std::size_t{r.host} + 1);
  HostWindow& host = hosts_[r.host];
  ++host.results;
  PairCounts& pair = host.Pair(r.src_nic, r.dst_nic);
  const bool traced = middle != PathTable::kNoPath;
  if (traced && middle >= middle_ok_.size()) {
    middle_ok_.resize(std::size_t{middle} + 1, 0);
    middle_slow_.resize(std::size_t{middle} + 1, 0);
  }

  UntracedTuples::Counts* tuple = nullptr;
  if (!traced) {
    tuple = untraced_.At(PathTable::Key(r.host, r.src_nic, r.dst_nic, r.src_port));
    if (tuple == nullptr) ++untraced_.overflow;
  }

  if (r.timeout) {
    ++(traced ? pair.traced_timeout : pair.untraced_timeout);
    if (tuple) ++tuple->timeout;
    timeouts_.Add(FailureGroups::Key(r.host, r.src_nic, r.dst_nic, middle));
    return;
  }
  ++(traced ? pair.traced_ok : pair.untraced_ok);
  if (traced) ++middle_ok_[middle];
  if (tuple) ++tuple->ok;
  if (r.t2_nic_send_ns == 0 || r.t3_nic_recv_ns == 0) return;  // no network latency known

  const std::int64_t latency = SaturatingSub(r.t3_nic_recv_ns, r.t2_nic_send_ns);
  if (latency > slow_threshold_ns_) {
    ++(traced ? pair.traced_slow : pair.untraced_slow);
    if (traced) ++middle_slow_[middle];
    if (tuple) ++tuple->slow;
    slow_.Add(FailureGroups::Key(r.host, r.src_nic, r.dst_nic, middle));
  }
  const auto r_index = static_cast<std::size_t>(rail);
  if (r_index >= rail_latency_.size()) {
    rail_latency_.resize(r_index + 1);
    rail_processing_.resize(r_index + 1);
  }
  const int li = host.latency.Index(static_cast<double>(latency));
  host.latency.AddIndex(li);
  if (traced) {
    if (middle >= middle_latency_.size()) middle_latency_.resize(std::size_t{middle} + 1);
    middle_latency_[middle].AddIndex(li);
  }
  rail_latency_[r_index].AddIndex(li);
  if (r.t1_app_send_ns == 0 || r.t4_app_recv_ns == 0) return;
  const std::int64_t processing =
      SaturatingSub(SaturatingSub(r.t4_app_recv_ns, r.t1_app_send_ns), latency);
  const int pi = host.processing.Index(static_cast<double>(processing));
  host.processing.AddIndex(pi);
  rail_processing_[r_index].AddIndex(pi);
}

std::uint64_t WindowAccumulator::ResolveLatePaths(const PathTable& paths) {
  std::uint64_t moved = 0;
  for (std::size_t i = 0; i < untraced_.keys.size(); ++i) {
    const std::uint64_t key = untraced_.keys[i];
    const auto host = static_cast<HostId>(key >> 26);
    const auto src = static_cast<NicId>((key >> 21) & 31);
    const auto dst = static_cast<NicId>((key >> 16) & 31);
    const MiddleId middle = paths.Lookup(host, src, dst, static_cast<std::uint16_t>(key & 0xffff));
    UntracedTuples::Counts& c = untraced_.counts[i];
    if (middle == PathTable::kNoPath || c.ok + c.timeout == 0) continue;
    if (middle >= middle_ok_.size()) {
      middle_ok_.resize(std::size_t{middle} + 1, 0);
      middle_slow_.resize(std::size_t{middle} + 1, 0);
    }
    PairCounts& pair = hosts_[host].Pair(src, dst);
    pair.untraced_ok -= c.ok;
    pair.traced_ok += c.ok;
    pair.untraced_timeout -= c.timeout;
    pair.traced_timeout += c.timeout;
    pair.untraced_slow -= c.slow;
    pair.traced_slow += c.slow;
    middle_ok_[middle] += c.ok;
    middle_slow_[middle] += c.slow;
    const std::uint64_t untraced_group = FailureGroups::Key(host, src, dst, PathTable::kNoPath);
    const std::uint64_t traced_group = FailureGroups::Key(host, src, dst, middle);
    if (c.timeout > 0) timeouts_.Move(untraced_group, traced_group, c.timeout);
    if (c.slow > 0) slow_.Move(untraced_group, traced_group, c.slow);
    moved += c.ok + c.timeout;
    c = {};
  }
  return moved;
}

std::size_t WindowAccumulator::memory_bytes() const {
  std::size_t sketches = middle_latency_.capacity() * sizeof(QuantileSketch);
  for (const auto& m : middle_latency_) sketches += m.bucket_span() * sizeof(std::uint32_t);
  std::size_t bytes =
      sketches + sizeof(*this) + flaps_.memory_bytes() + timeouts_.index.memory_bytes() +
      slow_.index.memory_bytes() + (timeouts_.keys.capacity() + slow_.keys.capacity()) * 12 +
      (middle_ok_.capacity() + middle_slow_.capacity()) * 4 + untraced_.index.memory_bytes() +
      untraced_.keys.capacity() * (8 + sizeof(UntracedTuples::Counts));
  for (const auto& h : hosts_) {
    bytes += sizeof(h) + h.pairs.capacity() * sizeof(PairCounts) +
             (h.latency.bucket_span() + h.processing.bucket_span()) * 4;
  }
  return bytes;
}

}  // namespace hostmesh::analysis
