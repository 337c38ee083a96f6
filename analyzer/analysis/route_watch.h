#pragma once

// Links routing has withdrawn. A link that goes down carries nothing once the
// routing protocol reconverges (BFD and BGP: about a second), so its probes
// stop failing and loss evidence has nothing to hold it by, while the fabric
// runs one spine short for as long as it lasts. Traceroutes still show it:
// a rail switch hashes every new flow over its up-links, so each 5-tuple's
// first trace (and a retrace that found its path changed) is a fresh ECMP
// draw there. A link none of N such draws picked, on a switch with k
// up-links, is one routing does not use, with a chance of error of at most
// (1 - 1/k)^N. Only the first switch of a path is tested: a switch above it
// sees flows already sorted by the hash below (hash polarization), so its
// draws are not independent.
//
// A trace that stops right after the rail switch may have gone up any of the
// switch's links (a gray one eats its traces; elsewhere a silent spine and a
// loss further on do the same). So the test is: of the n draws since the
// link was last seen in use, at most c (those cut short there) can have
// picked it; a link in use, drawn with chance 1/k, shows c or fewer with
// chance at most exp(-n KL(c/n || 1/k)) (Chernoff; (1 - 1/k)^n when c = 0).
// A gray link's share of traces is all cut short, so it is never taken for
// one routing avoids.
//
// Switches' ICMP rate limits cut traces short too, and at fleet scale most
// of them: each switch's budget is shared by every host that traces through
// it (1,000 answers a second among 1,000 hosts is one a host), so at 1,000
// hosts a tenth of fresh draws was cut short past the rail switch. Past a
// share of 1/k, c is never below what a link in use could have hidden among
// them, and a link down was named for its first window's losses alone. But a
// gray link eats its probes with its traces, a rate limit only the answers:
// so a draw cut short there waits for its 5-tuple's next probe outcome.
// Delivered, the cut said nothing of which way it went: no draw. Lost, or no
// outcome within pending_ttl (a 5-tuple is probed every 11 s by default), it
// is a draw any of the switch's up-links may have picked, as before. While
// it waits, it counts so only for the up-links named for their loss in the
// window (`failing`), so that a gray link's first cut traces count at once;
// for the others it is no draw yet, either way. A link routing withdrew
// carries no probe, so nothing fails on it: at 1,000 hosts 260-560 draws
// await an outcome at each rail switch at any time, and counted against
// every up-link they kept a down link from being told apart for two windows.
// A window is judged on the draws traced before its end (Close), not on
// those of its grace: a link that goes down in the grace is the next
// window's.
// Pure; not thread-safe.

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/analysis/types.h"

namespace hostmesh::analysis {

struct WithdrawnLink {
  LinkId link = kUnknown;
  double p_value = 0;  // chance that the draws since it was last used missed a link in use
};

class RouteWatch {
 public:
  static constexpr std::int64_t kDefaultPendingTtlNs = 60'000'000'000;
  // Draws awaiting an outcome (about 70 bytes each): past it, a cut-short
  // draw counts at once, as one any up-link may have picked.
  static constexpr std::size_t kMaxPending = std::size_t{1} << 20;

  // Precondition: 0 < false_alarm < 1 (per link and decision).
  explicit RouteWatch(double false_alarm, std::int64_t pending_ttl_ns = kDefaultPendingTtlNs,
                      std::size_t max_pending = kMaxPending)
      : false_alarm_(false_alarm), pending_ttl_ns_(pending_ttl_ns), max_pending_(max_pending) {}

  // One traced path (PathRecord::links and candidates). `fresh`: the
  // 5-tuple's first path, or one different from the path it had. `key`: the
  // 5-tuple's (PathTable::Key), for a draw cut short past the rail switch to
  // await its outcome.
  void AddTrace(const PathRecord& path, bool fresh, const FabricMap& fabric, std::uint64_t key);
  // A probe outcome of a 5-tuple (PathTable::Key); cheap when none awaits.
  void AddOutcome(std::uint64_t key, bool delivered, const FabricMap& fabric) {
    if (!pending_.empty()) Resolve(key, delivered, fabric);
  }
  // Cut-short draws traced before now - pending_ttl with no outcome yet count
  // as draws any up-link may have picked.
  void Expire(std::int64_t now_ns, const FabricMap& fabric);
  std::size_t awaiting() const { return pending_.size(); }
  // Cut-short draws counted at once because max_pending awaited already.
  std::uint64_t overflow() const { return overflow_; }

  // The up-links routing does not use now, by link id. `failing`, by link
  // id: 1 for the links named for their loss in the window (the draws
  // awaiting an outcome may have picked those); shorter than the links: 0
  // for the rest.
  // `as_of_ns`: the end of a window Close kept the counts for (else: now).
  std::vector<WithdrawnLink> Withdrawn(const FabricMap& fabric, std::span<const char> failing,
                                       std::int64_t as_of_ns = kNow) const {
    return Unused(fabric, false_alarm_, failing, as_of_ns);
  }
  // The same test at another chance of error (0 < alpha < 1).
  std::vector<WithdrawnLink> Unused(const FabricMap& fabric, double alpha,
                                    std::span<const char> failing,
                                    std::int64_t as_of_ns = kNow) const;
  static constexpr std::int64_t kNow = std::numeric_limits<std::int64_t>::max();
  // Keeps the counts as they stand now for windows ending at or before
  // end_ns and after the latest end kept before (an end not past that one is
  // no-op): call it with a trace's window start before adding the trace.
  // Forget drops what no window ending at or after end_ns reads.
  void Close(std::int64_t end_ns);
  void Forget(std::int64_t end_ns);
  // By link id: 1 for the up-links the watch can judge (their switch has two
  // or more up-links and has made fresh draws), 0 for every other link.
  std::vector<char> Watched(const FabricMap& fabric) const;

 private:
  struct LinkState {
    std::uint64_t draws_at_use = 0;     // its switch's draws when it was last used
    std::uint64_t maybe_since_use = 0;  // draws since, cut short where it may be
  };
  struct Pending {
    SwitchId sw = kUnknown;
    std::int64_t time_ns = 0;
  };
  void Grow(LinkId link, SwitchId sw);
  void Use(LinkId link, SwitchId sw);
  void Resolve(std::uint64_t key, bool delivered, const FabricMap& fabric);
  void Settle(SwitchId sw, bool delivered, const FabricMap& fabric);
  // A draw at `sw` that any of its up-links may have picked.
  void CountCutShort(SwitchId sw, const FabricMap& fabric);
  std::vector<std::uint32_t> UpLinks(const FabricMap& fabric) const;  // by switch

  // What the test reads.
  struct Counts {
    std::vector<std::uint64_t> draws;       // by switch: fresh draws, ever
    std::vector<LinkState> links;           // by link
    std::vector<std::uint64_t> pending_at;  // by switch: draws awaiting an outcome
  };
  // Kept counts: a window judged after its grace needs one, the window open
  // beside it another; more only while the judge lags, when the oldest go
  // (its window then reads a later one: the counts of a little after).
  static constexpr std::size_t kMaxClosed = 4;

  double false_alarm_;
  std::int64_t pending_ttl_ns_;
  std::size_t max_pending_;
  Counts now_;
  std::map<std::int64_t, Counts> closed_;  // by the end of the window they were kept for
  std::int64_t closed_to_ = std::numeric_limits<std::int64_t>::min();  // latest end kept
  std::unordered_map<std::uint64_t, Pending> pending_;
  std::deque<std::pair<std::int64_t, std::uint64_t>> pending_order_;  // (time, key) as traced
  std::vector<std::vector<LinkId>> up_links_;  // by switch, for fabric links of up_links_span_
  std::size_t up_links_span_ = 0;
  std::uint64_t overflow_ = 0;
};

}  // namespace hostmesh::analysis
