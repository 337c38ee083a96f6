// Capture requests on their way to agents: the analyzer asks an agent for its
// flight recorder (an incident that involves its host) by queueing a
// CaptureRequest here; the agent's upload stream attaches its pending
// requests to the next ack it writes (upload_reactor.h) and forgets them once
// sent. A request for an agent with no stream waits, bounded per agent and in
// agents, and expires after `expiry`. Thread-safe: the evidence keeper asks,
// the reactors take.
//
// It also remembers what was asked of whom (once attached to an ack) for
// `answer_window`: ingest takes a flight record only from an agent asked for
// that incident (WasAsked), so an agent cannot file records nobody wanted
// (they are kept 30 days). The memory is bounded per agent and in agents; it
// does not outlive the process, so an answer that arrives after a restart is
// refused (the evidence keeps the rest).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/base/clock.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::analyzer::ingest {

struct CaptureOutboxOptions {
  std::size_t max_per_agent = 16;  // = kMaxCapturesPerAck: one ack carries them all
  std::size_t max_agents = 10'000;
  std::chrono::nanoseconds expiry = std::chrono::minutes{5};
  // How long an agent may take to answer: a recorder answers at its next
  // batch, within seconds, unless it is rate-limited or reconnecting.
  std::chrono::nanoseconds answer_window = std::chrono::minutes{10};
  std::size_t max_asked_per_agent = 64;  // the oldest forgotten first
};

struct CaptureOutboxCounters {
  std::uint64_t requested = 0;  // accepted into the outbox
  std::uint64_t sent = 0;       // attached to an ack
  std::uint64_t refused = 0;    // bad request, agent's queue or the agents full
  std::uint64_t expired = 0;    // no stream of the agent wrote an ack in time
  std::uint64_t pending = 0;
  std::uint64_t unasked = 0;  // flight records refused: nobody asked that agent for that incident
};

class CaptureOutbox {
 public:
  explicit CaptureOutbox(const Clock& clock, CaptureOutboxOptions options = {});

  // Queues `request` for `agent_id`. False (counted) when the request is bad
  // (incident 0, an empty range), or the agent's queue or the outbox is
  // full; a request for an incident already queued for it replaces that one.
  bool Request(const std::string& agent_id, const v1::CaptureRequest& request);

  // Moves `agent_id`'s pending, unexpired requests into `ack` (at most
  // max_per_agent). Cheap when nothing is pending for anyone.
  void AttachTo(std::string_view agent_id, v1::UploadAck& ack);

  // Whether `agent_id` was sent a request for `incident_id` within the
  // answer window; false is counted as unasked.
  bool WasAsked(std::string_view agent_id, std::uint64_t incident_id);

  CaptureOutboxCounters counters() const;

 private:
  struct Pending {
    v1::CaptureRequest request;
    MonoTime queued_at;
  };
  struct Asked {
    std::uint64_t incident_id;
    MonoTime sent_at;
  };
  // Drops what expired; mu_ held.
  void ExpireLocked(MonoTime now);
  // Remembers the requests sent to `agent_id`; mu_ held.
  void NoteAskedLocked(const std::string& agent_id, const std::deque<Pending>& sent, MonoTime now);

  const Clock& clock_;
  const CaptureOutboxOptions options_;
  std::atomic<std::size_t> pending_{0};  // read without mu_ on every ack
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::deque<Pending>> by_agent_;
  std::unordered_map<std::string, std::deque<Asked>> asked_;  // oldest first
  CaptureOutboxCounters counters_;
};

}  // namespace hostmesh::analyzer::ingest
