// Capture requests on their way to agents: the analyzer asks an agent for its
// flight recorder (an incident that involves its host) by queueing a
// CaptureRequest here; the agent's upload stream attaches its pending
// requests to the next ack it writes (upload_reactor.h) and forgets them once
// sent. A request for an agent with no stream waits, bounded per agent and in
// agents, and expires after `expiry`. Thread-safe: the evidence keeper asks,
// the reactors take.
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
};

struct CaptureOutboxCounters {
  std::uint64_t requested = 0;  // accepted into the outbox
  std::uint64_t sent = 0;       // attached to an ack
  std::uint64_t refused = 0;    // bad request, agent's queue or the agents full
  std::uint64_t expired = 0;    // no stream of the agent wrote an ack in time
  std::uint64_t pending = 0;
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

  CaptureOutboxCounters counters() const;

 private:
  struct Pending {
    v1::CaptureRequest request;
    MonoTime queued_at;
  };
  // Drops what expired; mu_ held.
  void ExpireLocked(MonoTime now);

  const Clock& clock_;
  const CaptureOutboxOptions options_;
  std::atomic<std::size_t> pending_{0};  // read without mu_ on every ack
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::deque<Pending>> by_agent_;
  CaptureOutboxCounters counters_;
};

}  // namespace hostmesh::analyzer::ingest
