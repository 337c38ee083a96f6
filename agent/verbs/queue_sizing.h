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

}  // namespace hostmesh::agent::verbs
