#pragma once

// Continuous mode: which 5-tuple to trace next, and what to report. Pure (no
// I/O, injected clock): the caller runs each trace it is handed (RunTrace over
// KernelTraceIo in the agent's tracer thread) and feeds the result back.
//
// - SetTargets() takes the 5-tuples of the current port pools. A 5-tuple new
//   to the set (its port rotated in) is due at once and goes before every
//   refresh; one that left is forgotten (a late result for it is counted, not
//   reported).
// - Each 5-tuple is traced again refresh_period after its last trace.
// - Every trace is paid for from the TraceBudget (trace_budget.h) before it is
//   handed out; when a due trace must wait for tokens, `budget_exhausted`
//   counts it once.
// - Probes are spent only where the path can have changed: a source's first
//   hop is the switch its NIC is cabled to, the same for all its 5-tuples, so
//   once a trace has seen it TTL 1 is probed again only first_hop_recheck
//   later (by whichever trace of that source comes next); a refresh hands the
//   engine the 5-tuple's known switches, so a path whose switches all answer
//   as before costs no probe to the (swallowing) destination. A two-tier
//   refresh is then 2 probes, not 4.
// - RetraceSoon() (a probe of the 5-tuple was lost) makes a traced 5-tuple
//   due now, ahead of later refreshes, at most once per loss_retrace_after:
//   a loss is when a path is most likely to have changed (routing moved it
//   off a link that went down) and when knowing it matters most; a path
//   known only from minutes ago would blame the links the flow left.
// - Several traces run at once (TraceRunner, trace_engine.h): NextTrace hands
//   out another while others are in flight, one per source NIC at most (its
//   next trace takes the first hop and path length this one learns) and up
//   to max_in_flight, each paid for from the budget first, so the per-switch
//   budgets bound them as they bound one at a time (the global burst of 8
//   lets about three go at once).
// - Wake-ups are gathered: when nothing could be handed out, wake_at is at
//   least `gather` after the last call that handed one out, so traces falling
//   due in between go out together at one wake-up, at most `gather` late
//   (the refresh period is minutes). A due trace short of budget waits only
//   until the global bucket is full again (no token lost), so a pass over
//   the pool keeps the budget's rate.
// - A report goes out after the first trace of a 5-tuple, whenever its path
//   changes (PathsDiffer against the known path; silent hops never count as a
//   change), and otherwise once report_period has passed since the last one.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/base/clock.h"
#include "tracer/due_queue.h"
#include "tracer/known_hops.h"
#include "tracer/path_report.h"
#include "tracer/trace_budget.h"
#include "tracer/trace_types.h"

namespace hostmesh::tracer {

struct ContinuousConfig {
  std::chrono::nanoseconds refresh_period = std::chrono::seconds{60};
  std::chrono::nanoseconds report_period = std::chrono::minutes{5};
  TraceBudgetConfig budget;
  // Reserved for a 5-tuple whose path length is not known yet (two-tier
  // same-host path: 3 switches + the destination).
  int expected_probes = 4;
  // How long a source's first hop, seen by one trace, is taken for granted by
  // the next ones (TTL 1 not probed).
  std::chrono::nanoseconds first_hop_recheck = std::chrono::seconds{30};
  // A lost probe's 5-tuple is traced again this long after its last trace at
  // the soonest (RetraceSoon); zero: losses do not bring traces forward.
  std::chrono::nanoseconds loss_retrace_after = std::chrono::seconds{30};
  // Traces handed out and not yet done, at most.
  std::size_t max_in_flight = 8;
  // Traces that fall due within this after the last hand-out wait for the
  // next gathered wake-up (0: each goes when due).
  std::chrono::nanoseconds gather{0};
  // Copied into every request (max_ttl, timeouts, destination_swallows,
  // session); tuple, netdev, generation and switch_hops are set per trace.
  TraceRequest request_template;
  // Each source NIC's netdev, by TraceTarget::src_nic (a trace's socket is
  // bound to it; none when missing or ""). Here once, not in every target: a
  // rotation hands over every 5-tuple of the host.
  std::vector<std::string> netdevs;
};

struct TraceTarget {
  std::uint32_t src_nic = 0;
  std::uint32_t dst_nic = 0;
  FiveTuple tuple;
};

// Plain counters; the agent exports them.
struct ContinuousCounters {
  std::uint64_t traces_run = 0;
  std::uint64_t trace_errors = 0;  // could not send (counted in traces_run too)
  std::uint64_t hops_answered = 0;
  std::uint64_t silent_hops = 0;
  std::uint64_t path_changes = 0;
  std::uint64_t reports = 0;
  std::uint64_t budget_exhausted = 0;  // due traces that had to wait for the budget
  std::uint64_t rotation_traces = 0;   // traces of 5-tuples new to the pool
  std::uint64_t results_dropped = 0;   // results for 5-tuples no longer in the pool
  std::uint64_t probes_sent = 0;
  std::uint64_t loss_retraces = 0;  // traces brought forward by a lost probe
};

class ContinuousTracer {
 public:
  ContinuousTracer(ContinuousConfig config, const Clock& clock);

  void SetTargets(const std::vector<TraceTarget>& targets);

  // The next trace to run now, or nullopt; `wake_at` is when to ask again (a
  // due time, or when the budget allows) when nothing is in flight.
  std::optional<TraceRequest> NextTrace(MonoTime& wake_at);
  // A probe of `tuple` was lost: trace it now if it is in the pool, traced,
  // not due or in flight already, and last traced loss_retrace_after ago.
  // Whether it was brought forward.
  bool RetraceSoon(const FiveTuple& tuple);
  // The result of a trace handed out by NextTrace; a report when one is due.
  std::optional<PathReport> OnTraceDone(const TraceResult& result);

  const ContinuousCounters& counters() const { return counters_; }
  std::size_t targets() const { return entries_.size(); }
  std::size_t in_flight() const { return busy_sources_.size(); }
  // The best knowledge of a 5-tuple's path, addresses and statuses by TTL
  // (no RTTs); nullopt until it is traced. For tests and `status`.
  std::optional<std::vector<Hop>> KnownPath(const FiveTuple& tuple) const;

 private:
  // One per 5-tuple of the pools (the map's key). 96 bytes, so that a node
  // of the map (next pointer, key, entry; the hash is not cached) takes a
  // 128-byte block: a host holds 896, the simulator 10,000 hosts' worth. What
  // only a trace in flight needs is kept in in_flight_entries_.
  struct Entry {
    MonoTime due{};
    MonoTime traced_at{};  // when its last trace ended
    MonoTime last_report{};
    std::uint32_t wanted = 0;  // the SetTargets call that last listed it
    std::uint32_t generation = 0;
    std::uint32_t src_nic = 0;
    std::uint32_t dst_nic = 0;
    int switch_hops = 0;      // from the last trace that reached the destination
    bool new_in_pool = true;  // not traced since it (re)entered the pool
    bool in_flight = false;
    bool waiting_for_budget = false;
    bool traced = false;
    KnownHops known;  // by TTL; updated in place
  };
  // A due queue's head that NextTrace considers.
  struct Candidate {
    int queue;
    MonoTime due;
    const FiveTuple* tuple;
    Entry* entry;
    bool operator<(const Candidate& o) const {
      return std::tie(queue, due, *tuple) < std::tie(o.queue, o.due, *o.tuple);
    }
  };

  // SetTargets' removal of the entries its call did not list.
  void EraseUnwanted();
  // The due queue of an entry that is not in flight (keyed by its due time).
  void Enqueue(const FiveTuple& tuple, Entry& e);
  void Dequeue(const FiveTuple& tuple, const Entry& e);
  // NextTrace's phases.
  MonoTime CollectDue(MonoTime now, std::vector<Candidate>& due_now) const;
  TraceRequest HandOut(Entry& best, const FiveTuple& tuple, double reserved, Ipv4 key,
                       MonoTime now);
  Ipv4 BudgetKey(Ipv4 src) const;
  // A reservation made under the source's key before its first hop was
  // known is settled against the first hop's bucket (TraceBudget::Rekey).
  Ipv4 SettleKey(Ipv4 reserved_key, Ipv4 src) const;
  // The source's first hop when seen within first_hop_recheck, else zero.
  Ipv4 TrustedFirstHop(Ipv4 src, MonoTime now) const;
  // Whether every switch of the entry's known path is known, and their addresses.
  static bool SwitchesKnown(const Entry& e);
  static std::vector<Ipv4> KnownSwitches(const Entry& e);
  // The known path as hops (RTTs zero), into `out`; and a trace's hops stored.
  static void ExpandKnown(const Entry& e, std::vector<Hop>& out);
  static void StoreKnown(const std::vector<Hop>& hops, Entry& e);
  int ExpectedProbes(const Entry& e, bool first_hop_known) const;

  ContinuousConfig config_;
  const Clock& clock_;
  TraceBudget budget_;
  std::unordered_map<FiveTuple, Entry, FiveTupleHash> entries_;
  // Entries not in flight by due time, per source address: [0] new to the
  // pool (traced first), [1] refreshes. The budget key is the source's, so a
  // refused key refuses its whole queue: NextTrace looks only at the head of
  // each source's queues (at most 2 x NICs entries), never at the pool. A
  // source's queue stays when empty (sources are the host's NICs).
  // Sorted by source: a flat vector, not a tree, so that NextTrace's walk
  // over every source's head reads a few contiguous lines (one host's
  // tracer state is cold when its turn comes round in the simulator).
  using SourceQueues = std::vector<std::pair<Ipv4, DueQueue<Entry*>>>;
  SourceQueues waiting_[2];
  static DueQueue<Entry*>& QueueOf(SourceQueues& queues, Ipv4 src);
  // Source address -> its first hop's address, learned from TTL-1 replies,
  // and when a trace last saw it.
  std::map<Ipv4, Ipv4> first_hop_;
  std::map<Ipv4, MonoTime> first_hop_seen_;
  // Budget reservations of traces whose 5-tuple left the pool while in flight.
  std::map<FiveTuple, std::pair<Ipv4, double>> orphans_;
  ContinuousCounters counters_;
  std::uint32_t set_targets_calls_ = 0;
  // Sources with a trace in flight (orphans included: their probes are still
  // out); a few, so a flat list.
  std::vector<Ipv4> busy_sources_;
  // The entries handed out and not done, by 5-tuple (as many as busy sources
  // at most), with the budget reserved for each under its key: OnTraceDone
  // finds its entry here, not in the hash map, whose bucket and chain are
  // cold when a trace ends (the simulator runs 10,000 tracers in turn). An
  // entry leaves it when done or when it leaves the pool (its reservation to
  // orphans_).
  struct InFlight {
    FiveTuple tuple;
    Entry* entry;
    Ipv4 budget_key;
    double reserved;
  };
  std::vector<InFlight> in_flight_entries_;
  MonoTime last_handout_ = MonoTime::min();
  // NextTrace's scratch, kept between calls so that it allocates nothing.
  std::vector<Candidate> due_now_;
  std::vector<Ipv4> refused_;
  std::vector<Hop> known_scratch_;  // OnTraceDone's, likewise
};

}  // namespace hostmesh::tracer
