#include "analyzer/ingest/capture_outbox.h"

#include <algorithm>

namespace hostmesh::analyzer::ingest {

CaptureOutbox::CaptureOutbox(const Clock& clock, CaptureOutboxOptions options)
    : clock_(clock), options_(options) {}

bool CaptureOutbox::Request(const std::string& agent_id, const v1::CaptureRequest& request) {
  const MonoTime now = clock_.MonotonicNow();
  std::lock_guard lock(mu_);
  ExpireLocked(now);
  if (request.incident_id() == 0 || request.from_ns() >= request.to_ns() || agent_id.empty()) {
    ++counters_.refused;
    return false;
  }
  auto it = by_agent_.find(agent_id);
  if (it == by_agent_.end()) {
    if (by_agent_.size() >= options_.max_agents) {
      ++counters_.refused;
      return false;
    }
    it = by_agent_.emplace(agent_id, std::deque<Pending>{}).first;
  }
  std::deque<Pending>& queue = it->second;
  const auto same = std::find_if(queue.begin(), queue.end(), [&](const Pending& p) {
    return p.request.incident_id() == request.incident_id();
  });
  if (same != queue.end()) {
    *same = {request, now};
    return true;
  }
  if (queue.size() >= options_.max_per_agent) {
    ++counters_.refused;
    return false;
  }
  queue.push_back({request, now});
  ++counters_.requested;
  pending_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void CaptureOutbox::AttachTo(std::string_view agent_id, v1::UploadAck& ack) {
  if (pending_.load(std::memory_order_relaxed) == 0) return;
  const MonoTime now = clock_.MonotonicNow();
  std::lock_guard lock(mu_);
  ExpireLocked(now);
  const auto it = by_agent_.find(std::string(agent_id));
  if (it == by_agent_.end()) return;
  for (const Pending& p : it->second) *ack.add_captures() = p.request;
  NoteAskedLocked(it->first, it->second, now);
  counters_.sent += it->second.size();
  pending_.fetch_sub(it->second.size(), std::memory_order_relaxed);
  by_agent_.erase(it);
}

void CaptureOutbox::NoteAskedLocked(const std::string& agent_id, const std::deque<Pending>& sent,
                                    MonoTime now) {
  auto it = asked_.find(agent_id);
  if (it == asked_.end()) {
    if (asked_.size() >= options_.max_agents) {
      // Full: forget the agents whose asks have all expired, else the oldest ask's agent.
      std::erase_if(asked_, [&](const auto& entry) {
        return now - entry.second.back().sent_at >= options_.answer_window;
      });
      if (asked_.size() >= options_.max_agents) {
        const auto oldest =
            std::min_element(asked_.begin(), asked_.end(), [](const auto& a, const auto& b) {
              return a.second.front().sent_at < b.second.front().sent_at;
            });
        asked_.erase(oldest);
      }
    }
    it = asked_.emplace(agent_id, std::deque<Asked>{}).first;
  }
  for (const Pending& p : sent) {
    it->second.push_back({p.request.incident_id(), now});
    if (it->second.size() > options_.max_asked_per_agent) it->second.pop_front();
  }
}

bool CaptureOutbox::WasAsked(std::string_view agent_id, std::uint64_t incident_id) {
  const MonoTime now = clock_.MonotonicNow();
  std::lock_guard lock(mu_);
  const auto it = asked_.find(std::string(agent_id));
  if (it != asked_.end()) {
    std::deque<Asked>& asks = it->second;
    while (!asks.empty() && now - asks.front().sent_at >= options_.answer_window) asks.pop_front();
    const bool asked = std::any_of(asks.begin(), asks.end(), [incident_id](const Asked& a) {
      return a.incident_id == incident_id;
    });
    if (asks.empty()) asked_.erase(it);
    if (asked) return true;
  }
  ++counters_.unasked;
  return false;
}

void CaptureOutbox::ExpireLocked(MonoTime now) {
  for (auto it = by_agent_.begin(); it != by_agent_.end();) {
    std::deque<Pending>& queue = it->second;
    while (!queue.empty() && now - queue.front().queued_at >= options_.expiry) {
      queue.pop_front();
      ++counters_.expired;
      pending_.fetch_sub(1, std::memory_order_relaxed);
    }
    it = queue.empty() ? by_agent_.erase(it) : std::next(it);
  }
}

CaptureOutboxCounters CaptureOutbox::counters() const {
  std::lock_guard lock(mu_);
  CaptureOutboxCounters c = counters_;
  c.pending = pending_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace hostmesh::analyzer::ingest
