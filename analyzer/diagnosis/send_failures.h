#pragma once

// Probes an RNIC could not send itself (hostmesh.v1.ProbeResult.send_failed:
// its port down, a QP in error), per window and sending RNIC. The analysis
// keeps them out of loss, as they crossed no link; the diagnosis reads them as
// evidence that the RNIC is down. Windows are by send time, as the analysis'.
// Not thread-safe: its owner serialises Add and Take.

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>

#include "analyzer/analysis/types.h"

namespace hostmesh::analyzer::diagnosis {

// An RNIC as one number; send failures of one window by it.
using SendFailures = std::unordered_map<std::uint64_t, std::uint64_t>;
inline std::uint64_t RnicKey(analysis::HostId host, analysis::NicId nic) {
  return std::uint64_t{host} * analysis::kMaxNics + nic;
}

class SendFailureTally {
 public:
  // RNICs tallied across the windows held, at most: 8 NICs of 10,000 hosts in
  // three windows. Past it a further RNIC is not tallied (counted).
  static constexpr std::size_t kMaxEntries = std::size_t{1} << 18;

  explicit SendFailureTally(std::int64_t window_ns) : window_ns_(window_ns) {}

  void Add(analysis::HostId host, analysis::NicId nic, std::int64_t send_time_ns);
  // The window starting at window_start_ns; it and every earlier one are forgotten.
  SendFailures Take(std::int64_t window_start_ns);

  // Send failures of windows already taken (judged), not tallied.
  std::uint64_t late() const { return late_; }
  // Send failures of RNICs past kMaxEntries, not tallied.
  std::uint64_t untallied() const { return untallied_; }

 private:
  std::int64_t window_ns_;
  std::map<std::int64_t, SendFailures> windows_;  // by start
  std::size_t entries_ = 0;
  bool taken_ = false;
  std::int64_t taken_through_ = 0;  // start of the last window taken
  std::uint64_t late_ = 0;
  std::uint64_t untallied_ = 0;
};

}  // namespace hostmesh::analyzer::diagnosis
