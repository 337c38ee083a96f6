// The AgentIngest protocol without gRPC: Hello, and per batch validate ->
// commit -> ack. The gRPC service (ingest_service.h) only moves messages
// between the wire and this class.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "analyzer/ingest/agent_directory.h"
#include "analyzer/ingest/agent_quota.h"
#include "analyzer/ingest/batch_validator.h"
#include "analyzer/ingest/capture_outbox.h"
#include "analyzer/ingest/in_flight_budget.h"
#include "analyzer/ingest/ingest_sink.h"
#include "analyzer/ingest/ingest_stats.h"
#include "analyzer/ingest/peer_identity.h"
#include "analyzer/ingest/streams_per_peer.h"
#include "analyzer/store/group_committer.h"
#include "analyzer/store/store.h"
#include "common/base/clock.h"
#include "common/base/warn_throttle.h"

namespace hostmesh::analyzer::ingest {

struct IngestOptions {
  ValidationLimits limits;
  std::string analyzer_version = "hostmesh-analyzer";
  // Batches of one stream being committed at once: enough to keep the stream
  // busy across an fsync, few enough to bound memory per agent.
  std::size_t max_in_flight_per_stream = 8;
  // Memory of batches read and not yet durable: per stream (it stops reading
  // until its commits drain) and across all streams (a stream that would pass
  // it ends with RESOURCE_EXHAUSTED). A fleet of 10,000 agents at one batch a
  // second holds about 100 MB; the Kubernetes limit is 8 GiB.
  std::size_t max_in_flight_bytes_per_stream = 32 << 20;
  std::size_t max_in_flight_bytes = std::size_t{1} << 30;
  QuotaOptions quota;  // bytes per agent id over time (agent_quota.h)
  // Bytes of batches refused (invalid, another agent's, not a batch) one
  // certificate may send beyond that: the quota is for an honest agent's
  // results (and its resend after an outage), not for bytes the analyzer
  // throws away. 1 MiB, refilled at 64 KiB/s: an honest agent's batches are
  // refused rarely (one that finds the allowance clear is acked REJECTED
  // whatever its size, so the agent drops it), and 100 hostile certificates
  // make the analyzer read one message each and then 6.4 MB/s of refused
  // bytes, not 100 MiB/s.
  double refused_burst_bytes = 1 << 20;
  double refused_bytes_per_second = 64 << 10;
  // How long a stream refused for what its peer did waits before it ends
  // (refusal_tarpit.h).
  std::chrono::milliseconds refusal_delay{1000};
  // Upload streams one certificate may hold open at once (streams_per_peer.h;
  // 0: no limit).
  std::size_t max_streams_per_peer = 4;
  // Upload streams one certificate may open per minute, beyond a burst of
  // stream_open_burst (0: no limit). An agent opens one per connection and
  // backs off between failures (200 ms doubling to 30 s); a peer that makes
  // gRPC itself end its streams (a message over gRPC's size limit, a reset),
  // which no refusal of the analyzer's sees, is held to this rate instead of
  // reopening at once, each stream costing a read.
  double stream_opens_per_minute = 12;
  double stream_open_burst = 8;
  // Streams at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS):
  // an agent holds an Upload stream and now and then a Hello; more are a peer
  // reopening refused ones while the refusal delay holds them.
  std::uint32_t max_streams_per_connection = 16;
  // Memory for the Hellos of the agents that said one (agent_directory.h):
  // about 1 KiB an agent of 8 NICs, so 64 MiB holds about 60,000 agents.
  std::size_t max_hello_memory_bytes = std::size_t{64} << 20;
  // Capture requests for agents, attached to the acks of their streams (the
  // analyzer's evidence keeper fills it); null: none. Must outlive the server.
  CaptureOutbox* captures = nullptr;
};

enum class HelloCode {
  kOk,
  kFailedPrecondition,
  kInvalidArgument,
  kUnavailable,
  kPermissionDenied
};
struct HelloOutcome {
  HelloCode code = HelloCode::kOk;
  std::string message;
};

class IngestHandler {
 public:
  // `sink` may be null. Everything passed by reference must outlive the handler.
  IngestHandler(const Clock& clock, store::Store& store, store::GroupCommitter& committer,
                IngestStats& stats, IngestSink* sink, IngestOptions options);

  // Unknown schema version: kFailedPrecondition; a host or agent id `peer`
  // may not speak for: kPermissionDenied; bad names, sizes or NICs:
  // kInvalidArgument. Records the Hello (its NICs are what later batches are
  // checked against) and fills the reply.
  HelloOutcome Hello(const v1::AgentHello& hello, const PeerIdentity& peer, v1::HelloReply& reply);

  struct Screened {
    std::optional<v1::UploadAck> rejected;  // invalid: the REJECTED ack, already counted
    std::optional<std::string> denied;      // `peer` may not send it: end the stream
    // Its agent is over its byte quota, or its certificate over its allowance
    // for refused bytes: end the stream (after the REJECTED ack, if there is one).
    std::optional<std::string> over_quota;
    std::shared_ptr<const KnownAgent> agent;  // when ok: the Hello it was checked against
    bool ok() const { return !rejected && !denied && !over_quota; }
  };
  // Checks who sent a batch and validates it; of a valid batch, clears the
  // stamp pairs that contradict each other (ClearContradictoryStamps).
  // `encoded_bytes` is its wire size.
  Screened Screen(v1::UploadBatch& batch, std::size_t encoded_bytes, const PeerIdentity& peer);

  // The global in-flight byte limit (options().max_in_flight_bytes).
  bool TakeInFlight(std::size_t bytes);
  void GiveInFlight(std::size_t bytes);

  // Commits a screened batch; `agent` is its Screened::agent, handed to the
  // sink with it. `done` runs on the committer thread with the ACCEPTED or
  // DUPLICATE ack, or with nullopt and the error when the store failed (the
  // stream must then end: resending later may work).
  using AckDone = std::function<void(std::optional<v1::UploadAck> ack, const std::string& error)>;
  void Commit(std::shared_ptr<store::CommitLane> lane, store::OwnedBatch batch,
              std::shared_ptr<const KnownAgent> agent, AckDone done);

  // An Upload stream of `peer`, counted under `key` (StreamsPerPeer::KeyOf),
  // opens: nullopt, or why not (counted and warned of) when its certificate
  // already holds its limit of streams or opens them faster than its rate.
  std::optional<std::string> OpenStream(const std::string& key, const PeerIdentity& peer);
  // Whether a new stream of `peer` must wait: its certificate or one of the
  // agents it names is in debt (agent_quota.h).
  bool InDebt(const std::string& key, const PeerIdentity& peer);
  // Charges a message the analyzer refused (not a batch, another agent's, or
  // invalid) to the sender's allowance for refused bytes (refused_burst_bytes):
  // unless held, the stream must end (RESOURCE_EXHAUSTED).
  AgentQuota::Taken ChargeRefused(const PeerIdentity& peer, std::string_view agent_id,
                                  std::size_t bytes);
  void CloseStream(const std::string& key) { streams_.Close(key); }

  const IngestOptions& options() const { return options_; }
  // Memory the agents' Hellos take (at most options().max_hello_memory_bytes).
  std::size_t agents_held_bytes() const { return agents_.bytes(); }
  IngestStats& stats() { return stats_; }

 private:
  // Refuses flight records that nobody asked this agent for (CaptureOutbox).
  std::optional<Rejection> CheckAsked(const v1::UploadBatch& batch) const;
  void ClearStamps(v1::UploadBatch& batch);
  // Counts `n` events for `throttle`: how many to warn of now, if a warning is due.
  std::optional<std::uint64_t> NoteWarn(WarnThrottle& throttle, std::uint64_t n);
  // The agent directory dropped Hellos to stay within its bound.
  void HellosDropped(std::size_t dropped);

  const Clock& clock_;
  store::Store& store_;
  store::GroupCommitter& committer_;
  IngestStats& stats_;
  IngestSink* const sink_;
  const IngestOptions options_;
  AgentDirectory agents_;
  InFlightBudget in_flight_;
  AgentQuota quota_;
  AgentQuota refused_quota_;  // by certificate (StreamsPerPeer::KeyOf), or agent id when insecure
  StreamsPerPeer streams_;
  AgentQuota stream_opens_;  // by certificate, in streams (stream_opens_per_minute)
  std::mutex warn_mu_;
  WarnThrottle stamps_warn_{std::chrono::minutes{1}};
  WarnThrottle streams_warn_{std::chrono::minutes{1}};
  WarnThrottle hellos_warn_{std::chrono::minutes{1}};
};

}  // namespace hostmesh::analyzer::ingest
