#include "analyzer/analysis/window_accumulator.h"

#include <algorithm>

namespace hostmesh::analysis {

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

  if (r.timeout) {
    ++(traced ? pair.traced_timeout : pair.untraced_timeout);
    timeouts_.Add(FailureGroups::Key(r.host, r.src_nic, r.dst_nic, middle));
    return;
  }
  ++(traced ? pair.traced_ok : pair.untraced_ok);
  if (traced) ++middle_ok_[middle];
  if (r.t2_nic_send_ns == 0 || r.t3_nic_recv_ns == 0) return;  // no network latency known

  const std::int64_t latency = r.t3_nic_recv_ns - r.t2_nic_send_ns;
  if (latency > slow_threshold_ns_) {
    ++(traced ? pair.traced_slow : pair.untraced_slow);
    if (traced) ++middle_slow_[middle];
    slow_.Add(FailureGroups::Key(r.host, r.src_nic, r.dst_nic, middle));
  }
  const auto r_index = static_cast<std::size_t>(rail);
  if (r_index >= rail_latency_.size()) {
    rail_latency_.resize(r_index + 1);
    rail_processing_.resize(r_index + 1);
  }
  const int li = host.latency.Index(static_cast<double>(latency));
  host.latency.AddIndex(li);
  rail_latency_[r_index].AddIndex(li);
  if (r.t1_app_send_ns == 0 || r.t4_app_recv_ns == 0) return;
  const std::int64_t processing = (r.t4_app_recv_ns - r.t1_app_send_ns) - latency;
  const int pi = host.processing.Index(static_cast<double>(processing));
  host.processing.AddIndex(pi);
  rail_processing_[r_index].AddIndex(pi);
}

std::size_t WindowAccumulator::memory_bytes() const {
  std::size_t bytes = sizeof(*this) + timeouts_.index.memory_bytes() + slow_.index.memory_bytes() +
                      (timeouts_.keys.capacity() + slow_.keys.capacity()) * 12 +
                      (middle_ok_.capacity() + middle_slow_.capacity()) * 4;
  for (const auto& h : hosts_) {
    bytes += sizeof(h) + h.pairs.capacity() * sizeof(PairCounts) +
             (h.latency.bucket_span() + h.processing.bucket_span()) * 4;
  }
  return bytes;
}

}  // namespace hostmesh::analysis
