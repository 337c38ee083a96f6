#pragma once

// A 5-tuple's last known path as the continuous tracer keeps it: each hop's
// address and status by TTL (index + 1), without the RTT. A host keeps one
// per 5-tuple of its pools (896 with 8 NICs and 16 ports; the simulator
// 10,000 hosts' worth), so the first kInline hops (a two-tier fabric's whole
// path: 3 switches and the destination) live in place and only a longer path
// takes a block of its own: a std::vector took one for every path, 48 bytes
// with malloc's header beside its 24.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "tracer/ipv4.h"
#include "tracer/trace_types.h"

namespace hostmesh::tracer {

struct KnownHop {
  Ipv4 address;
  HopStatus status = HopStatus::kSilent;
  std::uint8_t icmp_code = 0;
};

class KnownHops {
 public:
  static constexpr std::size_t kInline = 4;
  // Paths are bounded by the trace's max_ttl (kMaxTtl at most).
  static constexpr std::size_t kMaxSize = 255;

  std::size_t size() const { return size_; }
  const KnownHop& operator[](std::size_t i) const {
    return i < kInline ? inline_[i] : rest_[i - kInline];
  }
  KnownHop& operator[](std::size_t i) { return i < kInline ? inline_[i] : rest_[i - kInline]; }

  // n hops (at most kMaxSize), every one silent: the caller writes them all.
  // A path of the same length keeps its block.
  void Reset(std::size_t n) {
    n = std::min(n, kMaxSize);
    const std::size_t rest = n > kInline ? n - kInline : 0;
    const std::size_t had = size_ > kInline ? size_ - kInline : 0;
    if (rest != had) rest_ = rest > 0 ? std::make_unique<KnownHop[]>(rest) : nullptr;
    size_ = static_cast<std::uint8_t>(n);
    for (std::size_t i = 0; i < n; ++i) (*this)[i] = KnownHop{};
  }

 private:
  std::array<KnownHop, kInline> inline_{};
  std::unique_ptr<KnownHop[]> rest_;
  std::uint8_t size_ = 0;
};

}  // namespace hostmesh::tracer
