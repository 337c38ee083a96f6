#include "tracer/continuous_tracer.h"

#include <algorithm>
#include <set>

namespace hostmesh::tracer {

ContinuousTracer::ContinuousTracer(ContinuousConfig config, const Clock& clock)
    : config_(std::move(config)), clock_(clock), budget_(config_.budget, clock.MonotonicNow()) {}

void ContinuousTracer::SetTargets(const std::vector<TraceTarget>& targets) {
  const MonoTime now = clock_.MonotonicNow();
  // The targets in 5-tuple order (the last of duplicates wins), walked along
  // the entries: one pass, no lookup per 5-tuple at every rotation.
  std::vector<const TraceTarget*> sorted;
  sorted.reserve(targets.size());
  for (const TraceTarget& t : targets) sorted.push_back(&t);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const TraceTarget* a, const TraceTarget* b) { return a->tuple < b->tuple; });
  const auto forget = [&](std::map<FiveTuple, Entry>::iterator it) {
    if (it->second.in_flight) {
      orphans_[it->first] = {it->second.budget_key, it->second.reserved};
    } else {
      Dequeue(it->first, it->second);
    }
    if (const auto src = sources_.find(it->first.src);
        src != sources_.end() && --src->second == 0) {
      sources_.erase(src);
    }
    return entries_.erase(it);
  };
  auto it = entries_.begin();
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const TraceTarget& t = *sorted[i];
    if (i + 1 < sorted.size() && sorted[i + 1]->tuple == t.tuple) continue;
    while (it != entries_.end() && it->first < t.tuple) it = forget(it);
    if (it != entries_.end() && it->first == t.tuple) {
      it->second.target = t;
      ++it;
      continue;
    }
    const auto added = entries_.emplace_hint(it, t.tuple, Entry{});
    added->second.target = t;
    added->second.due = now;
    ++sources_[t.tuple.src];
    Enqueue(added->first, added->second);
  }
  while (it != entries_.end()) it = forget(it);
}

Ipv4 ContinuousTracer::BudgetKey(const TraceTarget& target) const {
  const auto it = first_hop_.find(target.tuple.src);
  return it == first_hop_.end() ? target.tuple.src : it->second;
}

Ipv4 ContinuousTracer::SettleKey(Ipv4 reserved_key, Ipv4 src) const {
  if (reserved_key != src) return reserved_key;
  const auto it = first_hop_.find(src);
  return it == first_hop_.end() ? src : it->second;
}

int ContinuousTracer::ExpectedProbes(const Entry& e) const {
  return e.switch_hops > 0 ? e.switch_hops + 1 : config_.expected_probes;
}

void ContinuousTracer::Enqueue(const FiveTuple& tuple, const Entry& e) {
  waiting_[e.new_in_pool ? 0 : 1][tuple.src].emplace(e.due, tuple);
}

void ContinuousTracer::Dequeue(const FiveTuple& tuple, const Entry& e) {
  auto& by_source = waiting_[e.new_in_pool ? 0 : 1];
  const auto queue = by_source.find(tuple.src);
  if (queue == by_source.end()) return;
  queue->second.erase({e.due, tuple});
  if (queue->second.empty()) by_source.erase(queue);
}

std::optional<TraceRequest> ContinuousTracer::NextTrace(MonoTime& wake_at) {
  const MonoTime now = clock_.MonotonicNow();
  // New 5-tuples first, then the most overdue refresh. A first hop whose
  // bucket is empty must not hold up the other NICs: the candidates are the
  // most overdue entry of every source, in due order (the order a walk over
  // all due entries skipping refused keys would try them in, since a source's
  // entries share its key). Keys follow sources, so once every source's key
  // was refused, stop.
  std::vector<const DueOrder::Item*> heads[2];
  for (int q = 0; q < 2; ++q) {
    for (const auto& [src, queue] : waiting_[q]) {
      if (queue.begin()->first <= now) heads[q].push_back(&*queue.begin());
    }
    std::sort(heads[q].begin(), heads[q].end(),
              [](const DueOrder::Item* a, const DueOrder::Item* b) { return *a < *b; });
  }
  wake_at = MonoTime::max();
  Entry* best = nullptr;
  std::set<Ipv4> refused;
  double reserved = 0;
  Ipv4 key;
  for (const auto& candidates : heads) {
    for (const DueOrder::Item* head : candidates) {
      if (best != nullptr || refused.size() >= sources_.size()) break;
      Entry& e = entries_.find(head->second)->second;
      key = BudgetKey(e.target);
      if (refused.contains(key)) continue;
      const int probes = ExpectedProbes(e);
      reserved = budget_.TryReserve(key, probes, now);
      if (reserved > 0) {
        best = &e;
        break;
      }
      refused.insert(key);
      if (!e.waiting_for_budget) ++counters_.budget_exhausted;
      e.waiting_for_budget = true;
      wake_at = std::min(wake_at, budget_.WhenAvailable(key, probes, now));
    }
  }
  if (best == nullptr) {
    // Nothing runs now: wake for the first entry that is not due yet, unless a
    // refused key's budget allows one sooner.
    for (const auto& by_source : waiting_) {
      for (const auto& [src, queue] : by_source) {
        if (const auto later = queue.upper_bound(now); later != queue.end()) {
          wake_at = std::min(wake_at, later->first);
        }
      }
    }
    return std::nullopt;
  }
  Dequeue(best->target.tuple, *best);
  best->waiting_for_budget = false;
  best->in_flight = true;
  best->reserved = reserved;
  best->budget_key = key;
  if (best->new_in_pool) ++counters_.rotation_traces;
  TraceRequest request = config_.request_template;
  request.tuple = best->target.tuple;
  request.netdev = best->target.netdev;
  request.generation = best->generation++;
  request.switch_hops = best->switch_hops;
  wake_at = now;
  return request;
}

std::optional<PathReport> ContinuousTracer::OnTraceDone(const TraceResult& result) {
  const MonoTime now = clock_.MonotonicNow();
  ++counters_.traces_run;
  counters_.probes_sent += static_cast<std::uint64_t>(result.probes_sent);
  counters_.hops_answered += static_cast<std::uint64_t>(result.answered_hops());
  counters_.silent_hops += static_cast<std::uint64_t>(result.silent_hops());
  if (result.end == TraceEnd::kError) ++counters_.trace_errors;
  if (!result.hops.empty() && result.hops.front().status == HopStatus::kTimeExceeded) {
    const auto [known, inserted] =
        first_hop_.try_emplace(result.tuple.src, result.hops.front().address);
    if (inserted) budget_.Rekey(result.tuple.src, known->second, now);
    known->second = result.hops.front().address;
  }

  const auto it = entries_.find(result.tuple);
  if (it == entries_.end() || !it->second.in_flight) {
    if (const auto orphan = orphans_.find(result.tuple); orphan != orphans_.end()) {
      budget_.Settle(SettleKey(orphan->second.first, result.tuple.src), orphan->second.second,
                     result.probes_sent, now);
      orphans_.erase(orphan);
    }
    ++counters_.results_dropped;
    return std::nullopt;
  }
  Entry& e = it->second;
  budget_.Settle(SettleKey(e.budget_key, result.tuple.src), e.reserved, result.probes_sent, now);
  e.in_flight = false;
  e.new_in_pool = false;
  e.due = now + config_.refresh_period;
  Enqueue(it->first, e);
  if (result.end == TraceEnd::kError) return std::nullopt;

  const bool first = !e.traced;
  const bool changed = e.traced && PathsDiffer(e.known, result.hops);
  e.known = e.traced ? MergeKnownHops(e.known, result.hops) : result.hops;
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
  report.src_nic = e.target.src_nic;
  report.dst_nic = e.target.dst_nic;
  report.hops = result.hops;
  report.reached_destination = result.reached_destination;
  report.changed = changed;
  report.time = clock_.RealtimeNow();
  return report;
}

const std::vector<Hop>* ContinuousTracer::KnownPath(const FiveTuple& tuple) const {
  const auto it = entries_.find(tuple);
  return it == entries_.end() || !it->second.traced ? nullptr : &it->second.known;
}

}  // namespace hostmesh::tracer
