#pragma once

// How many receives a NIC keeps posted. A UD message that finds the receive
// queue empty is dropped by the NIC, silently, and reads as network loss, so
// the queue must outlast the longest time the agent may not poll: every peer
// may probe this NIC in the same stall (N-1 probes per interval at worst).

#include <chrono>
#include <cstdint>

namespace hostmesh::agent::verbs {

inline constexpr std::uint32_t kMinRecvQueueDepth = 256;
inline constexpr std::uint32_t kMaxRecvQueueDepth = 32768;

// Receives for `num_nics` NICs probing every `interval` that survive a poll
// stall of `stall`, rounded up to a power of two, in [256, 32768].
std::uint32_t RecvQueueDepthFor(std::chrono::nanoseconds interval, std::uint32_t num_nics,
                                std::chrono::nanoseconds stall);

// How many receives are posted, so a queue that ran dry is counted: the
// device drops what arrives then without a trace on this side, so a poll
// that finds every posted receive consumed is the agent's only witness
// (probes lost to it read as network loss; the depth above should prevent it).
class ReceiveQueueLevel {
 public:
  void Reset(std::uint32_t posted) { posted_ = posted; }
  void OnPosted() { ++posted_; }
  // A receive completion (not a flush: a QP in error is reset and refilled
  // as a whole). True when it took the last posted receive: the queue was empty.
  bool OnConsumed() {
    if (posted_ == 0) return false;  // already counted
    return --posted_ == 0;
  }
  std::uint32_t posted() const { return posted_; }

 private:
  std::uint32_t posted_ = 0;
};

}  // namespace hostmesh::agent::verbs
