#include "tracer/continuous_tracer.h"

#include <algorithm>

namespace hostmesh::tracer {

ContinuousTracer::ContinuousTracer(ContinuousConfig config, const Clock& clock)
    : config_(std::move(config)), clock_(clock), budget_(config_.budget, clock.MonotonicNow()) {}

void ContinuousTracer::SetTargets(const std::vector<TraceTarget>& targets) {
  const MonoTime now = clock_.MonotonicNow();
  // Only ever grown: a reserve below the table's bucket count rehashes it
  // down, every entry, and a rotation's insertions would rehash it up again.
  if (static_cast<float>(targets.size()) >
      static_cast<float>(entries_.bucket_count()) * entries_.max_load_factor()) {
    entries_.reserve(targets.size());
  }
  // Entries still wanted carry this call's stamp (no set of the targets: a
  // pool's rotation hands over every 5-tuple of the host). Those that left
  // go before the new ones come: their nodes are reused, where inserting
  // first held a rotation's worth of both at once.
  ++set_targets_calls_;
  for (const TraceTarget& t : targets) {
    if (const auto it = entries_.find(t.tuple); it != entries_.end()) {
      it->second.wanted = set_targets_calls_;
    }
  }
  EraseUnwanted();
  for (const TraceTarget& t : targets) {
    auto [it, inserted] = entries_.try_emplace(t.tuple);
    it->second.src_nic = t.src_nic;
    it->second.dst_nic = t.dst_nic;
    it->second.wanted = set_targets_calls_;
    if (inserted) {
      it->second.due = now;
      Enqueue(it->first, it->second);
    }
  }
}

void ContinuousTracer::EraseUnwanted() {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.wanted == set_targets_calls_) {
      ++it;
      continue;
    }
    if (it->second.in_flight) {
      const auto flight = std::find_if(in_flight_entries_.begin(), in_flight_entries_.end(),
                                       [&](const InFlight& f) { return f.entry == &it->second; });
      if (flight != in_flight_entries_.end()) {
        orphans_[it->first] = {flight->budget_key, flight->reserved};
        in_flight_entries_.erase(flight);
      }
    } else {
      Dequeue(it->first, it->second);
    }
    it = entries_.erase(it);
  }
}

Ipv4 ContinuousTracer::BudgetKey(Ipv4 src) const {
  const auto it = first_hop_.find(src);
  return it == first_hop_.end() ? src : it->second;
}

Ipv4 ContinuousTracer::SettleKey(Ipv4 reserved_key, Ipv4 src) const {
  if (reserved_key != src) return reserved_key;
  const auto it = first_hop_.find(src);
  return it == first_hop_.end() ? src : it->second;
}

Ipv4 ContinuousTracer::TrustedFirstHop(Ipv4 src, MonoTime now) const {
  const auto seen = first_hop_seen_.find(src);
  if (seen == first_hop_seen_.end() || now - seen->second >= config_.first_hop_recheck) return {};
  return first_hop_.at(src);
}

bool ContinuousTracer::SwitchesKnown(const Entry& e) {
  if (e.switch_hops <= 0 || static_cast<int>(e.known.size()) <= e.switch_hops) return false;
  for (int i = 0; i < e.switch_hops; ++i) {
    if (e.known[static_cast<std::size_t>(i)].status != HopStatus::kTimeExceeded) return false;
  }
  return true;
}

std::vector<Ipv4> ContinuousTracer::KnownSwitches(const Entry& e) {
  if (!SwitchesKnown(e)) return {};
  std::vector<Ipv4> out;
  for (int i = 0; i < e.switch_hops; ++i)
    out.push_back(e.known[static_cast<std::size_t>(i)].address);
  return out;
}

int ContinuousTracer::ExpectedProbes(const Entry& e, bool first_hop_known) const {
  // The switches and the destination; a confirmed path spares the
  // destination's probe, a known first hop TTL 1's.
  int probes = e.switch_hops > 0 ? e.switch_hops + 1 : config_.expected_probes;
  if (SwitchesKnown(e)) --probes;
  if (first_hop_known) --probes;
  return std::max(probes, 1);
}

void ContinuousTracer::Enqueue(const FiveTuple& tuple, Entry& e) {
  // Entries live in a node-based map: the pointer stays valid until the entry
  // is erased, and an entry leaves its queue before that (or is in flight).
  QueueOf(waiting_[e.new_in_pool ? 0 : 1], tuple.src).Insert({e.due, tuple, &e});
}

DueQueue<ContinuousTracer::Entry*>& ContinuousTracer::QueueOf(SourceQueues& queues, Ipv4 src) {
  const auto it = std::lower_bound(queues.begin(), queues.end(), src,
                                   [](const auto& q, Ipv4 s) { return q.first < s; });
  if (it != queues.end() && it->first == src) return it->second;
  return queues.insert(it, {src, DueQueue<Entry*>{}})->second;
}

void ContinuousTracer::Dequeue(const FiveTuple& tuple, const Entry& e) {
  // A source's queue stays once made (sources are the host's NICs), so
  // finding it the way Enqueue does costs nothing more.
  QueueOf(waiting_[e.new_in_pool ? 0 : 1], tuple.src).Erase(e.due, tuple);
}

// The heads of the per-source queues due by `now` into `due_now` (sources
// with a trace in flight left out); returns when the next one falls due.
MonoTime ContinuousTracer::CollectDue(MonoTime now, std::vector<Candidate>& due_now) const {
  MonoTime next_due = MonoTime::max();
  due_now.clear();
  for (int q = 0; q < 2; ++q) {
    for (const auto& [src, queue] : waiting_[q]) {
      // Asked again when its trace is done.
      if (std::find(busy_sources_.begin(), busy_sources_.end(), src) != busy_sources_.end()) {
        continue;
      }
      if (queue.empty()) continue;
      const auto& head = queue.front();
      if (head.due <= now) {
        due_now.push_back({q, head.due, &head.tuple, head.value});
        if (const auto* later = queue.FirstAfter(now)) next_due = std::min(next_due, later->due);
      } else {
        next_due = std::min(next_due, head.due);
      }
    }
  }
  return next_due;
}

// The request for a due entry whose budget was reserved; the entry is in
// flight from now.
TraceRequest ContinuousTracer::HandOut(Entry& best_entry, const FiveTuple& tuple, double reserved,
                                       Ipv4 key, MonoTime now) {
  Entry* best = &best_entry;
  // Copied first: the tuple lives in the queue item that Dequeue removes.
  TraceRequest request = config_.request_template;
  request.tuple = tuple;
  Dequeue(request.tuple, *best);
  busy_sources_.push_back(request.tuple.src);
  last_handout_ = now;
  best->waiting_for_budget = false;
  best->in_flight = true;
  in_flight_entries_.push_back({request.tuple, best, key, reserved});
  if (best->new_in_pool) ++counters_.rotation_traces;
  if (best->src_nic < config_.netdevs.size()) request.netdev = config_.netdevs[best->src_nic];
  request.generation = best->generation++;
  request.switch_hops = best->switch_hops;
  request.first_hop = TrustedFirstHop(request.tuple.src, now);
  request.known_hops = KnownSwitches(*best);
  return request;
}

std::optional<TraceRequest> ContinuousTracer::NextTrace(MonoTime& wake_at) {
  const MonoTime now = clock_.MonotonicNow();
  if (busy_sources_.size() >= config_.max_in_flight) {
    // Asked again when one is done.
    wake_at = MonoTime::max();
    return std::nullopt;
  }
  // The candidates are the heads of the per-source queues that are due, in
  // the order the pool would be: new 5-tuples first, then the most overdue
  // refresh. A first hop whose bucket is empty must not hold up the other
  // NICs: the next candidate is tried, except under a key already refused.
  std::vector<Candidate>& due_now = due_now_;  // scratch, kept: no allocation per call
  MonoTime next_due = CollectDue(now, due_now);
  std::sort(due_now.begin(), due_now.end());
  // Gathered: what falls due before the next gathered wake-up waits for it.
  // A due trace held up by the budget is not: it goes when the tokens are
  // there (the first pass runs at the budget's rate).
  if (next_due != MonoTime::max() && last_handout_ != MonoTime::min()) {
    next_due = std::max(next_due, last_handout_ + config_.gather);
  }
  wake_at = next_due;
  // A trace short of budget waits at least until the global bucket is full
  // again: no token is lost by waiting that long, and the traces that can go
  // then go together (a pass over rotated-in ports wakes about 5 times a
  // second, not once per trace).
  const MonoTime budget_gather =
      config_.gather.count() > 0 ? budget_.WhenGlobalFull(now) : MonoTime::min();
  Entry* best = nullptr;
  const FiveTuple* best_tuple = nullptr;
  // Keys refused in this call: a few (one per first hop), so a flat list.
  std::vector<Ipv4>& refused = refused_;
  refused.clear();
  double reserved = 0;
  Ipv4 key;
  for (const Candidate& c : due_now) {
    Entry& e = *c.entry;
    key = BudgetKey(c.tuple->src);
    if (std::find(refused.begin(), refused.end(), key) != refused.end()) continue;
    const int probes = ExpectedProbes(e, !TrustedFirstHop(c.tuple->src, now).IsZero());
    reserved = budget_.TryReserve(key, probes, now);
    if (reserved > 0) {
      best = &e;
      best_tuple = c.tuple;
      break;
    }
    refused.push_back(key);
    if (!e.waiting_for_budget) ++counters_.budget_exhausted;
    e.waiting_for_budget = true;
    wake_at = std::min(wake_at, std::max(budget_.WhenAvailable(key, probes, now), budget_gather));
  }
  if (best == nullptr) return std::nullopt;
  wake_at = now;
  return HandOut(*best, *best_tuple, reserved, key, now);
}

std::optional<PathReport> ContinuousTracer::OnTraceDone(const TraceResult& result) {
  const MonoTime now = clock_.MonotonicNow();
  ++counters_.traces_run;
  counters_.probes_sent += static_cast<std::uint64_t>(result.probes_sent);
  counters_.hops_answered += static_cast<std::uint64_t>(result.answered_hops());
  counters_.silent_hops += static_cast<std::uint64_t>(result.silent_hops());
  if (result.end == TraceEnd::kError) ++counters_.trace_errors;
  if (result.first_probed_ttl == 1 && !result.hops.empty() &&
      result.hops.front().status == HopStatus::kTimeExceeded) {
    const auto [known, inserted] =
        first_hop_.try_emplace(result.tuple.src, result.hops.front().address);
    if (inserted) budget_.Rekey(result.tuple.src, known->second, now);
    known->second = result.hops.front().address;
    first_hop_seen_[result.tuple.src] = now;
  }

  const auto flight = std::find_if(in_flight_entries_.begin(), in_flight_entries_.end(),
                                   [&](const InFlight& f) { return f.tuple == result.tuple; });
  std::erase(busy_sources_, result.tuple.src);
  if (flight == in_flight_entries_.end()) {
    if (const auto orphan = orphans_.find(result.tuple); orphan != orphans_.end()) {
      budget_.Settle(SettleKey(orphan->second.first, result.tuple.src), orphan->second.second,
                     result.probes_sent, now);
      orphans_.erase(orphan);
    }
    ++counters_.results_dropped;
    return std::nullopt;
  }
  Entry& e = *flight->entry;
  budget_.Settle(SettleKey(flight->budget_key, result.tuple.src), flight->reserved,
                 result.probes_sent, now);
  in_flight_entries_.erase(flight);
  e.in_flight = false;
  e.new_in_pool = false;
  e.traced_at = now;
  e.due = now + config_.refresh_period;
  Enqueue(result.tuple, e);
  if (result.end == TraceEnd::kError) return std::nullopt;

  const bool first = !e.traced;
  bool changed = false;
  if (e.traced) {
    ExpandKnown(e, known_scratch_);
    changed = PathsDiffer(known_scratch_, result.hops);
    StoreKnown(MergeKnownHops(known_scratch_, result.hops), e);
  } else {
    StoreKnown(result.hops, e);
  }
  e.traced = true;
  if (result.reached_destination) {
    e.switch_hops = static_cast<int>(result.hops.size()) - 1;
  }
  if (changed) ++counters_.path_changes;
  if (!first && !changed && now - e.last_report < config_.report_period) return std::nullopt;

  e.last_report = now;
  ++counters_.reports;
  PathReport report;
  report.tuple = result.tuple;
  report.src_nic = e.src_nic;
  report.dst_nic = e.dst_nic;
  report.hops = result.hops;
  report.reached_destination = result.reached_destination;
  report.changed = changed;
  report.time = clock_.RealtimeNow();
  return report;
}

bool ContinuousTracer::RetraceSoon(const FiveTuple& tuple) {
  if (config_.loss_retrace_after.count() <= 0) return false;
  const auto it = entries_.find(tuple);
  if (it == entries_.end()) return false;
  Entry& e = it->second;
  const MonoTime now = clock_.MonotonicNow();
  // Untraced ones are first in line already.
  if (e.in_flight || !e.traced || e.due <= now) return false;
  if (now - e.traced_at < config_.loss_retrace_after) return false;
  Dequeue(it->first, e);
  e.due = now;
  Enqueue(it->first, e);
  ++counters_.loss_retraces;
  return true;
}

std::optional<std::vector<Hop>> ContinuousTracer::KnownPath(const FiveTuple& tuple) const {
  const auto it = entries_.find(tuple);
  if (it == entries_.end() || !it->second.traced) return std::nullopt;
  std::vector<Hop> hops;
  ExpandKnown(it->second, hops);
  return hops;
}

void ContinuousTracer::StoreKnown(const std::vector<Hop>& hops, Entry& e) {
  e.known.Reset(hops.size());  // in place: a path's length rarely changes
  for (std::size_t i = 0; i < e.known.size(); ++i) {
    e.known[i] = {hops[i].address, hops[i].status, hops[i].icmp_code};
  }
}

void ContinuousTracer::ExpandKnown(const Entry& e, std::vector<Hop>& out) {
  out.clear();
  for (std::size_t i = 0; i < e.known.size(); ++i) {
    const KnownHop& k = e.known[i];
    out.push_back(Hop{static_cast<int>(i) + 1, k.address, k.status, {}, k.icmp_code});
  }
}

}  // namespace hostmesh::tracer
