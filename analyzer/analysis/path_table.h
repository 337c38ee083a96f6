#pragma once

// The last known path of every live probe 5-tuple. A path is stored as its
// fabric part (links between the two NIC links), interned: a fleet of 10,000
// hosts has tens of millions of NIC-to-NIC paths but only rails^2 x spines
// fabric parts per pod, and per-window counters are kept per fabric part.
// The NIC links are learned per RNIC (the first link of a path it sends on).
//
// Ageing: agents rotate their source ports (by default a port lives 4 minutes
// in a pool, and 10,000 hosts bring about 2 million new 5-tuples a minute), so
// a 5-tuple neither reported (Add) nor probed (Use) for `ttl` is forgotten,
// on the table's own clock (AdvanceTo, driven by the analysis). Memory then
// follows the 5-tuples of the live pools plus ttl's worth of rotation, not
// history. A fabric part no 5-tuple refers to any more is an orphan: its id
// and links stay valid until the windows that may count probes under it are
// judged (HoldOrphans / FreeOrphans), then the id is reused.

#include <chrono>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/analysis/aging_map.h"
#include "analyzer/analysis/flat_map.h"
#include "analyzer/analysis/types.h"

namespace hostmesh::analysis {

using MiddleId = std::uint32_t;

class PathTable {
 public:
  // Fabric parts beyond this many are not interned (their probes count as untraced).
  static constexpr MiddleId kMaxMiddles = (1u << 22) - 1;
  static constexpr MiddleId kNoPath = kMaxMiddles;
  static constexpr std::chrono::nanoseconds kDefaultTtl = std::chrono::minutes{5};
  // Clock steps per ttl, and how many of them one full sweep of the table
  // takes: a 5-tuple is forgotten between ttl and ttl x (1 + 1/64 + 16/64).
  static constexpr std::int64_t kTicksPerTtl = 64;
  static constexpr std::int64_t kSweepTicks = 16;

  // The destination port is RoCEv2's fixed 4791, so the source port alone tells
  // 5-tuples of one NIC pair apart.
  static std::uint64_t Key(HostId host, NicId src, NicId dst, std::uint16_t src_port) {
    return (std::uint64_t{host} << 26) | (std::uint64_t{src} << 21) | (std::uint64_t{dst} << 16) |
           src_port;
  }

  // Precondition: ttl > 0.
  explicit PathTable(std::chrono::nanoseconds ttl = kDefaultTtl);

  // Replaces the 5-tuple's path, fresh as of now. A partial path (a trace cut
  // short, silent hops) that the 5-tuple's known path fits leaves the known
  // one in place, fresh: ECMP still hashes the 5-tuple the same way, and the
  // known path names the link the partial one can only list among others.
  // Precondition: nic ids < kMaxNics.
  void Add(const PathRecord& path);

  // The 5-tuple's fabric part, or kNoPath; Lookup leaves its age alone, Use
  // (a probe was sent on it) makes it fresh.
  MiddleId Lookup(HostId host, NicId src, NicId dst, std::uint16_t src_port) const {
    const auto* v = paths_.Find(Key(host, src, dst, src_port));
    return v ? *v : kNoPath;
  }
  MiddleId Use(HostId host, NicId src, NicId dst, std::uint16_t src_port) {
    const auto* v = paths_.Touch(Key(host, src, dst, src_port), tick_);
    return v ? *v : kNoPath;
  }

  // Starts loading the 5-tuple's slot, for a Use or Lookup of it soon after.
  void Prefetch(HostId host, NicId src, NicId dst, std::uint16_t src_port) const {
    paths_.Prefetch(Key(host, src, dst, src_port));
  }

  // Moves the clock to now_ns (never back) and forgets the 5-tuples that aged
  // out, a slice of the table per call. The first call sets the origin: what
  // was added before it counts as fresh then (a restart's replayed paths).
  void AdvanceTo(std::int64_t now_ns);

  // Orphaned fabric parts stay readable until every window that may count
  // probes under them is judged: only windows open when a part was orphaned
  // can, since no lookup returns it after. HoldOrphans(start of the newest open
  // window, or kNoWindow) before judging marks those orphaned since the last
  // call; FreeOrphans(judged_before_ns) after frees the marked ones whose
  // windows all start before judged_before_ns. A part reported again meanwhile
  // is adopted back under its id.
  static constexpr std::int64_t kNoWindow = std::numeric_limits<std::int64_t>::min();
  void HoldOrphans(std::int64_t newest_open_window_start);
  void FreeOrphans(std::int64_t judged_before_ns);

  // Links of a fabric part (kUnknown where ambiguous); empty once freed.
  std::span<const LinkId> Middle(MiddleId id) const { return middles_[id].links; }
  // The links its ambiguous positions may be (positions index Middle(id)).
  std::span<const PathCandidate> Candidates(MiddleId id) const { return middles_[id].candidates; }
  // Fabric parts interned and not freed (orphans included).
  std::size_t middle_count() const { return middle_ids_.size(); }
  // The link of a NIC, learned from paths; kUnknown until one was seen.
  LinkId NicLink(HostId host, NicId nic) const {
    const auto* v = nic_links_.Find(std::uint64_t{host} * kMaxNics + nic);
    return v ? *v : kUnknown;
  }
  // One more than the largest link id seen.
  std::size_t link_span() const { return link_span_; }
  // 5-tuples with a path.
  std::size_t size() const { return paths_.size(); }
  std::size_t memory_bytes() const;

  // 5-tuples forgotten for age, and fabric parts freed, since construction.
  std::uint64_t aged_out() const { return aged_out_; }
  std::uint64_t middles_freed() const { return middles_freed_; }
  // Partial paths that left a known path in place (Add).
  std::uint64_t partial_kept() const { return partial_kept_; }
  std::chrono::nanoseconds ttl() const { return std::chrono::nanoseconds{tick_ns_ * kTicksPerTtl}; }

 private:
  static constexpr std::int64_t kUnheld = std::numeric_limits<std::int64_t>::max();
  struct MiddleEntry {
    std::vector<LinkId> links;
    std::vector<PathCandidate> candidates;
    std::uint32_t refs = 0;       // 5-tuples whose path it is
    bool orphan_listed = false;   // in orphans_
    std::int64_t hold = kUnheld;  // orphan: freed once windows up to this start are judged
  };

  MiddleId Intern(std::span<const LinkId> middle, std::span<const PathCandidate> candidates);
  // Whether a known fabric part is what a partial one (kUnknown positions,
  // candidates) could be, and says more.
  bool Refines(const MiddleEntry& known, std::span<const LinkId> partial,
               std::span<const PathCandidate> candidates) const;
  void Ref(MiddleId id);
  void Unref(MiddleId id);

  std::int64_t tick_ns_;
  AgingMap paths_;  // 5-tuple key -> MiddleId
  FlatMap nic_links_;
  std::vector<MiddleEntry> middles_;  // by MiddleId
  std::unordered_map<std::string, MiddleId> middle_ids_;
  std::vector<MiddleId> free_ids_;
  std::vector<MiddleId> orphans_;
  std::size_t link_span_ = 0;

  bool started_ = false;
  std::int64_t origin_ns_ = 0;
  std::int64_t now_ns_ = 0;
  std::uint64_t ticks_ = 0;  // whole ticks since origin
  AgingMap::Tick tick_ = 0;  // ticks_ modulo 2^16
  double sweep_debt_ = 0;    // slots owed to the sweep
  std::uint64_t aged_out_ = 0;
  std::uint64_t middles_freed_ = 0;
  std::uint64_t partial_kept_ = 0;
  std::vector<PathCandidate> candidates_;  // Add's scratch
};

}  // namespace hostmesh::analysis
