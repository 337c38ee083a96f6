#include "agent/verbs/queue_sizing.h"

#include <algorithm>
#include <bit>

namespace hostmesh::agent::verbs {

std::uint32_t RecvQueueDepthFor(std::chrono::nanoseconds interval, std::uint32_t num_nics,
                                std::chrono::nanoseconds stall) {
  if (interval <= std::chrono::nanoseconds::zero() || num_nics < 2) return kMinRecvQueueDepth;
  const std::uint64_t peers = num_nics - 1;
  const std::uint64_t intervals =
      static_cast<std::uint64_t>((stall + interval - std::chrono::nanoseconds{1}) / interval);
  const std::uint64_t needed = std::max<std::uint64_t>(peers * intervals, 1);
  const std::uint64_t rounded = std::bit_ceil(std::min<std::uint64_t>(needed, kMaxRecvQueueDepth));
  return static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>(rounded, kMinRecvQueueDepth, kMaxRecvQueueDepth));
}

}  // namespace hostmesh::agent::verbs
