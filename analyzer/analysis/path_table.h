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
//
// Route churn: a trace that contradicts a 5-tuple's known path (routing moved
// it) leaves the 5-tuple ambiguous between its last two paths for
// `churn_hold`: the positions where they differ become candidates of both. A
// flapping link moves its flows away in each down phase and back in each up
// phase, so a trace taken in a down phase would otherwise put the failures of
// the next down phase's first second (before routing reacts) on the detour's
// healthy links. A failure is shared among the candidates by their loss
// rates, and what both paths cross drops out of it (Churned;
// inference_problem_builder.cc): routing moved the flow away from something
// on the part it left, so the flapping link, which every such flow may
// cross, explains them, and not the rail switch the two paths share.
// Without a further change for churn_hold the newest path stands alone.
//
// A cap per host: one agent's reports may hold at most `max_per_host`
// 5-tuples (an honest one holds its pools: NIC pairs x pool size, plus
// path_ttl of rotation). A new 5-tuple of a host at its cap is refused and
// counted, and the host is crowded: until it is down to 3/4 of its cap, the
// sweep forgets its 5-tuples idle for a quarter of ttl instead of ttl, so
// what it no longer probes is evicted and its live paths stay. What one host
// reports can then never crowd out another's.

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
  // Four loss-triggered retraces (traceroute.loss_retrace_after, 30 s) of a
  // flow that keeps failing: a route flapping at any period up to minutes
  // changes again within it.
  static constexpr std::chrono::nanoseconds kDefaultChurnHold = std::chrono::minutes{2};
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

  static constexpr std::uint32_t kUncapped = std::numeric_limits<std::uint32_t>::max();
  // A crowded host's 5-tuples idle this many ticks are evicted.
  static constexpr std::int64_t kCrowdedIdleTicks = kTicksPerTtl / 4;

  // Precondition: ttl > 0, max_per_host > 0.
  explicit PathTable(std::chrono::nanoseconds ttl = kDefaultTtl,
                     std::chrono::nanoseconds churn_hold = kDefaultChurnHold,
                     std::uint32_t max_per_host = kUncapped);

  // Replaces the 5-tuple's path, fresh as of now. A partial path (a trace cut
  // short, silent hops) that the 5-tuple's known path fits leaves the known
  // one in place, fresh: ECMP still hashes the 5-tuple the same way, and the
  // known path names the link the partial one can only list among others. A
  // path that contradicts the known one is a route change (see route churn
  // above). Returns whether the 5-tuple is new or its route changed: a fresh
  // ECMP draw (route_watch.h).
  // Precondition: nic ids < kMaxNics.
  bool Add(const PathRecord& path);

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
  // Whether it is the merge of a 5-tuple's last two paths (route churn), not
  // one trace's: its known positions are what the route kept.
  bool Churned(MiddleId id) const { return middles_[id].churned; }
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
  // The live 5-tuples (Key, fabric part) in table slots [begin, end) of
  // tuple_slots(), in no meaningful order; ages nothing. A pass in slices
  // may miss or repeat 5-tuples the table moved between them.
  template <typename Visit>
  void ForEachTupleInSlots(std::size_t begin, std::size_t end, Visit&& visit) const {
    paths_.ForEachInSlots(begin, end, std::forward<Visit>(visit));
  }
  template <typename Visit>
  void ForEachTuple(Visit&& visit) const {
    ForEachTupleInSlots(0, tuple_slots(), std::forward<Visit>(visit));
  }
  std::size_t tuple_slots() const { return paths_.capacity(); }
  // The parts of a Key.
  static HostId KeyHost(std::uint64_t key) { return static_cast<HostId>(key >> 26); }
  static NicId KeySrc(std::uint64_t key) { return static_cast<NicId>((key >> 21) & 31); }
  static NicId KeyDst(std::uint64_t key) { return static_cast<NicId>((key >> 16) & 31); }
  static std::uint16_t KeyPort(std::uint64_t key) { return static_cast<std::uint16_t>(key); }
  std::size_t memory_bytes() const;

  // 5-tuples forgotten for age, and fabric parts freed, since construction.
  std::uint64_t aged_out() const { return aged_out_; }
  std::uint64_t middles_freed() const { return middles_freed_; }
  // Partial paths that left a known path in place (Add).
  std::uint64_t partial_kept() const { return partial_kept_; }
  // New 5-tuples refused because their host was at its cap, 5-tuples evicted
  // early from crowded hosts, and the hosts crowded now.
  std::uint64_t refused_for_host_cap() const { return refused_for_host_cap_; }
  std::uint64_t evicted_for_host_cap() const { return evicted_for_host_cap_; }
  std::vector<HostId> crowded_hosts() const;
  // 5-tuples with a path reported by this host.
  std::uint32_t host_size(HostId host) const {
    return host < per_host_.size() ? per_host_[host] : 0;
  }
  // Route changes seen (Add), and 5-tuples ambiguous between two paths now.
  std::uint64_t route_changes() const { return route_changes_; }
  std::size_t churning() const { return churn_.size(); }
  std::chrono::nanoseconds ttl() const { return std::chrono::nanoseconds{tick_ns_ * kTicksPerTtl}; }

 private:
  // Add's phases.
  bool LearnNicLinks(const PathRecord& path);
  bool AddNewTuple(HostId host, std::uint64_t key, std::span<const LinkId> middle);
  static constexpr std::int64_t kUnheld = std::numeric_limits<std::int64_t>::max();
  struct MiddleEntry {
    std::vector<LinkId> links;
    std::vector<PathCandidate> candidates;
    bool churned = false;         // Merge's (a cut-short trace with the same candidates is another)
    std::uint32_t refs = 0;       // 5-tuples whose path it is
    bool orphan_listed = false;   // in orphans_
    std::int64_t hold = kUnheld;  // orphan: freed once windows up to this start are judged
  };

  // A 5-tuple whose route changed within churn_hold: its table entry is the
  // merge of these two (each holds a reference).
  struct Churn {
    MiddleId previous = kNoPath;
    MiddleId newest = kNoPath;
    std::int64_t until_ns = 0;
  };

  MiddleId Intern(std::span<const LinkId> middle, std::span<const PathCandidate> candidates,
                  bool churned = false);
  // The fabric part either of two may be: their links where they agree, the
  // candidates of both where they differ (none, any link, when either side
  // could be any). kNoPath when their lengths differ (not one pair of rails).
  MiddleId Merge(MiddleId a, MiddleId b);
  // Points the 5-tuple's entry at `id` (inserting it), fresh as of now.
  void Store(std::uint64_t key, MiddleId id);
  void ExpireChurn();
  // Whether a known fabric part is what a partial one (kUnknown positions,
  // candidates) could be, and says more.
  bool Refines(const MiddleEntry& known, std::span<const LinkId> partial,
               std::span<const PathCandidate> candidates) const;
  // The per-host count of a 5-tuple forgotten (for age or eviction).
  void Forgotten(std::uint64_t key);
  void Ref(MiddleId id);
  void Unref(MiddleId id);

  std::int64_t tick_ns_;
  std::int64_t churn_hold_ns_;
  std::uint32_t max_per_host_;
  std::vector<std::uint32_t> per_host_;  // by HostId: 5-tuples in paths_
  std::vector<bool> crowded_;            // by HostId: refused one since under its cap
  std::size_t crowded_count_ = 0;
  std::uint64_t refused_for_host_cap_ = 0;
  std::uint64_t evicted_for_host_cap_ = 0;
  AgingMap paths_;                                  // 5-tuple key -> MiddleId
  std::unordered_map<std::uint64_t, Churn> churn_;  // 5-tuple key -> its two paths
  std::int64_t next_churn_expiry_ns_ = std::numeric_limits<std::int64_t>::max();
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
  std::uint64_t route_changes_ = 0;
  std::vector<PathCandidate> candidates_;  // Add's scratch
  std::vector<LinkId> merged_links_;       // Merge's scratch
  std::vector<PathCandidate> merged_candidates_;
};

}  // namespace hostmesh::analysis
