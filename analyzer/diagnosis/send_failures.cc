#include "analyzer/diagnosis/send_failures.h"

namespace hostmesh::analyzer::diagnosis {

void SendFailureTally::Add(analysis::HostId host, analysis::NicId nic, std::int64_t send_time_ns) {
  if (window_ns_ <= 0 || send_time_ns <= 0 || nic >= analysis::kMaxNics) return;
  const std::int64_t start = send_time_ns - send_time_ns % window_ns_;
  if (taken_ && start <= taken_through_) {
    ++late_;
    return;
  }
  SendFailures& window = windows_[start];
  const std::uint64_t key = RnicKey(host, nic);
  const auto it = window.find(key);
  if (it != window.end()) {
    ++it->second;
    return;
  }
  if (entries_ >= kMaxEntries) {
    ++untallied_;
    if (window.empty()) windows_.erase(start);
    return;
  }
  window.emplace(key, 1);
  ++entries_;
}

SendFailures SendFailureTally::Take(std::int64_t window_start_ns) {
  SendFailures out;
  const auto end = windows_.upper_bound(window_start_ns);
  for (auto it = windows_.begin(); it != end; it = windows_.erase(it)) {
    entries_ -= it->second.size();
    if (it->first == window_start_ns) out = std::move(it->second);
  }
  if (!taken_ || window_start_ns > taken_through_) taken_through_ = window_start_ns;
  taken_ = true;
  return out;
}

}  // namespace hostmesh::analyzer::diagnosis
