#pragma once

// The UDP source ports (RoCEv2: flow labels) one local NIC probes with.
//
// One pool per source NIC, not per NIC pair. The destination address is part
// of the ECMP hash, so a per-NIC pool of 16 ports already gives every pair 16
// distinct 5-tuples, and the pairs of one NIC hash independently of each other.
// A per-pair pool would buy nothing for path coverage but cost 16 x (N-1) bound
// UDP sockets per NIC instead of 16 (112 instead of 16 with 8 NICs), and as many
// traceroute 5-tuples to keep fresh. For verbs one address handle per
// (destination, flow label) is needed either way.
//
// Rotation: every rotation_period the oldest rotation_fraction of the pool (at
// least one port) is replaced by ports never used before, taken from a seeded
// pseudo-random permutation of [min_port, max_port]. Every port of the range
// enters the pool once before any enters twice; then the next walk uses a fresh
// permutation. Replacing oldest-first gives every port the same lifetime, so
// each 5-tuple gets the same number of probes on average.
//
// Coverage accounting ("distinct ports a pair used in the last hour") keeps a
// ring of pool generations: per generation the pool's ports and, per
// destination, a bit per slot that was drawn. Memory is bounded by
// usage_window / rotation_period generations (at most kMaxHistoryGenerations),
// not by the probe rate. The window edge is fuzzy by one rotation period: a
// generation counts if any of it lies inside the window.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "agent/core/permutation.h"
#include "agent/core/probe_types.h"
#include "agent/core/rng.h"
#include "common/base/clock.h"

namespace hostmesh::agent {

struct PortPoolOptions {
  std::uint32_t pool_size = 16;  // clamped to the size of the port range
  std::chrono::nanoseconds rotation_period = std::chrono::seconds{60};
  double rotation_fraction = 0.25;  // of the pool, replaced each period (at least one port)
  std::uint16_t min_port = 49152;
  std::uint16_t max_port = 65535;
  std::chrono::nanoseconds usage_window = std::chrono::hours{1};
  // Non-empty: the only ports this NIC can send from (in place of
  // [min_port, max_port]), e.g. one per UD QP where the device fixes the
  // RoCEv2 source port per QP (soft-RoCE). Duplicates are ignored.
  std::vector<std::uint16_t> allowed_ports{};
};

class PortPool {
 public:
  // Caps the coverage history (e.g. a 1 s rotation period with a 1 h window).
  static constexpr std::size_t kMaxHistoryGenerations = 1024;

  // The pool of one source NIC that probes NICs 0..num_nics-1. Throws
  // std::invalid_argument for options no pool can satisfy (startup only).
  PortPool(const PortPoolOptions& options, std::uint32_t num_nics, MonoTime start,
           std::uint64_t seed);

  // Applies the rotations due by `now`. After a long stall it performs only as
  // many as renew the whole pool and moves the schedule on. Returns whether
  // a rotation was due. Inline: the scheduler asks for every NIC on every
  // turn of the probe loop, and a rotation is due once a minute.
  bool AdvanceTo(MonoTime now) {
    if (now < next_rotation_) return false;
    Advance(now);
    return true;
  }

  // A port drawn uniformly from the current pool for a probe to `dst`; the use
  // is recorded for DistinctPortsUsed.
  std::uint16_t Draw(NicId dst, Rng& rng);

  std::span<const std::uint16_t> ports() const { return ports_; }
  // The ports the next rotation will bring in, in order (empty when the pool
  // is the whole range): a transport builds what they need ahead of use.
  std::vector<std::uint16_t> NextRotationPorts() const;
  // 0 for the initial pool, +1 per rotation.
  std::uint64_t generation() const { return generation_; }
  MonoTime next_rotation() const { return next_rotation_; }
  // How many ports have entered the pool so far (counting re-entries after a
  // full walk of the range).
  std::uint64_t ports_introduced() const { return ports_introduced_; }
  std::uint32_t range_size() const { return range_size_; }
  std::uint32_t replace_per_rotation() const { return replace_count_; }

  // Distinct source ports drawn towards `dst` in the generations that were
  // current at some time in (now - usage_window, now].
  std::size_t DistinctPortsUsed(NicId dst, MonoTime now) const;

 private:
  struct Walk {
    std::uint64_t epoch;
    std::uint32_t index;
    Permutation permutation;
  };
  void Advance(MonoTime now);  // AdvanceTo's rotations, once some are due
  std::uint16_t NextUnusedPort();
  // The walk's next port not in `pool`, advancing `walk` (the pool's own walk or a copy).
  std::uint16_t NextUnusedPort(Walk& walk, std::span<const std::uint16_t> pool) const;
  std::uint16_t PortAt(std::uint32_t index) const;
  void Rotate(MonoTime at);
  void RecordGeneration(MonoTime start);
  std::size_t HistoryIndex(std::uint64_t generation) const {
    return static_cast<std::size_t>(generation % history_capacity_);
  }

  PortPoolOptions options_;  // allowed_ports sorted and unique
  std::uint32_t num_nics_;
  std::uint32_t range_size_;
  std::uint32_t replace_count_;
  std::uint64_t seed_;

  // The walk over the port range: position `walk_index_` of permutation
  // number `walk_epoch_`.
  std::uint64_t walk_epoch_ = 0;
  std::uint32_t walk_index_ = 0;
  Permutation permutation_;

  std::vector<std::uint16_t> ports_;
  std::size_t oldest_slot_ = 0;  // replaced first at the next rotation
  std::uint64_t generation_ = 0;
  std::uint64_t ports_introduced_ = 0;
  MonoTime next_rotation_;

  // Coverage history, flat arrays indexed by HistoryIndex(generation).
  std::size_t history_capacity_;
  std::size_t mask_words_;                    // 64-bit words per slot bitmask
  std::vector<MonoTime> history_start_;       // when each generation began
  std::vector<std::uint16_t> history_ports_;  // [generation][slot]
  std::vector<std::uint64_t> history_used_;   // [generation][dst][word]

  // DistinctPortsUsed's scratch, kept so that it allocates nothing (the
  // probe loop calls it; a pool is used from one thread).
  mutable std::vector<std::uint16_t> stint_port_;
  mutable std::vector<std::uint8_t> stint_used_;
  mutable std::vector<std::uint16_t> seen_;
};

}  // namespace hostmesh::agent
