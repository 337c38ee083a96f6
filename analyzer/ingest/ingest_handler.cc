#include "analyzer/ingest/ingest_handler.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

#include "analyzer/store/store_keys.h"
#include "common/base/names.h"
#include "proto/wire/packed_results.h"

namespace hostmesh::analyzer::ingest {

IngestHandler::IngestHandler(const Clock& clock, store::Store& store,
                             store::GroupCommitter& committer, IngestStats& stats, IngestSink* sink,
                             IngestOptions options)
    : clock_(clock),
      store_(store),
      committer_(committer),
      stats_(stats),
      sink_(sink),
      options_(std::move(options)),
      agents_(store, options_.max_hello_memory_bytes,
              [this](std::size_t dropped) { HellosDropped(dropped); }),
      in_flight_(options_.max_in_flight_bytes),
      quota_(options_.quota),
      refused_quota_(QuotaOptions{options_.refused_bytes_per_second, options_.refused_burst_bytes,
                                  options_.quota.max_agents}),
      streams_(options_.max_streams_per_peer),
      stream_opens_(QuotaOptions{options_.stream_opens_per_minute / 60, options_.stream_open_burst,
                                 options_.quota.max_agents}) {}

void IngestHandler::HellosDropped(std::size_t dropped) {
  stats_.hellos_dropped.Increment(static_cast<double>(dropped));
  const std::optional<std::uint64_t> warn = NoteWarn(hellos_warn_, dropped);
  if (warn) {
    spdlog::warn(
        "ingest: {} agents' Hellos dropped from memory in the last minute to keep it within its "
        "bound; they are read back from the store at their next batch. Made-up agent ids "
        "(grpc.insecure), or a fleet past the bound (hostmesh_ingest_hellos_dropped_total)",
        *warn);
  }
}

std::optional<std::uint64_t> IngestHandler::NoteWarn(WarnThrottle& throttle, std::uint64_t n) {
  const std::lock_guard lock(warn_mu_);
  return throttle.Note(clock_.MonotonicNow(), n);
}

bool IngestHandler::InDebt(const std::string& key, const PeerIdentity& peer) {
  if (peer.anyone()) return false;  // no certificate to know the agents by
  const MonoTime now = clock_.MonotonicNow();
  if (refused_quota_.InDebt(key, now)) return true;
  for (const std::string& name : peer.names()) {
    if (quota_.InDebt(name, now)) return true;
  }
  return false;
}

AgentQuota::Taken IngestHandler::ChargeRefused(const PeerIdentity& peer, std::string_view agent_id,
                                               std::size_t bytes) {
  const std::string key = peer.anyone() ? std::string(agent_id) : StreamsPerPeer::KeyOf(peer);
  return refused_quota_.Charge(key, bytes, clock_.MonotonicNow());
}

std::optional<std::string> IngestHandler::OpenStream(const std::string& key,
                                                     const PeerIdentity& peer) {
  std::string why;
  if (!key.empty() && options_.stream_opens_per_minute > 0 &&
      !stream_opens_.Take(key, 1, clock_.MonotonicNow())) {
    why = "this certificate opens Upload streams faster than " +
          std::to_string(static_cast<int>(options_.stream_opens_per_minute)) +
          " a minute (grpc.stream_opens_per_minute)";
  } else if (streams_.TryOpen(key)) {
    return std::nullopt;
  } else {
    why = "this certificate already holds " + std::to_string(streams_.max_per_peer()) +
          " Upload streams open (grpc.max_streams_per_agent)";
  }
  stats_.streams_refused.Increment();
  const std::optional<std::uint64_t> warn = NoteWarn(streams_warn_, 1);
  if (warn) {
    spdlog::warn(
        "ingest: {} Upload stream(s) refused in the last minute, the latest of {}: {}; an agent "
        "holds one and reopens it after a backoff (hostmesh_ingest_streams_refused_total)",
        *warn, peer.Describe().substr(0, 256), why);
  }
  return why + "; retry after a backoff";
}

HelloOutcome IngestHandler::Hello(const v1::AgentHello& hello, const PeerIdentity& peer,
                                  v1::HelloReply& reply) {
  if (auto error = CheckSchemaVersion(hello.schema_version())) {
    stats_.hellos_refused.Increment();
    return {HelloCode::kFailedPrecondition, *error};
  }
  if (auto error = ValidateHello(hello, hello.ByteSizeLong(), options_.limits)) {
    stats_.hellos_refused.Increment();
    return {HelloCode::kInvalidArgument, *error};
  }
  // Identity from the transport: the certificate must name the host and the
  // agent id, or one agent could rename another's host or write its results.
  for (const std::string* name : {&hello.host(), &hello.agent_id()}) {
    if (peer.MaySpeakFor(*name)) continue;
    stats_.hellos_denied.Increment();
    return {HelloCode::kPermissionDenied,
            "Hello for " + std::string(name == &hello.host() ? "host" : "agent_id") + " '" + *name +
                "' from " + peer.Describe()};
  }
  if (const store::StoreStatus s = store_.PutHello(hello); !s.ok()) {
    return {HelloCode::kUnavailable, s.error};
  }
  agents_.Remember(hello);
  stats_.hellos.Increment();
  reply.set_schema_version(v1::SCHEMA_VERSION_1);
  reply.set_analyzer_version(options_.analyzer_version);
  reply.set_last_durable_batch_seq(store_.LastDurableBatchSeq(hello.agent_id(), hello.boot_id()));
  reply.set_packed_results_format(wire::kPackedResultsFormat);  // Screen expands them
  return {};
}

// A flight record is kept 30 days: only the agent asked for that incident may
// file one (CaptureOutbox::WasAsked). An agent sends each in a batch of its
// own, so refusing the batch refuses nothing else.
std::optional<Rejection> IngestHandler::CheckAsked(const v1::UploadBatch& batch) const {
  for (int i = 0; i < batch.flight_records_size(); ++i) {
    const std::uint64_t incident = batch.flight_records(i).incident_id();
    if (options_.captures != nullptr && options_.captures->WasAsked(batch.agent_id(), incident)) {
      continue;
    }
    return Rejection{RejectReason::kUnaskedFlightRecord,
                     "flight record " + std::to_string(i) + ": incident " +
                         std::to_string(incident) + " was not asked of this agent (or its " +
                         "answer came too late, or across an analyzer restart)"};
  }
  return std::nullopt;
}

IngestHandler::Screened IngestHandler::Screen(v1::UploadBatch& batch, std::size_t encoded_bytes,
                                              const PeerIdentity& peer) {
  stats_.bytes.Increment(static_cast<double>(encoded_bytes));
  Screened out;
  if (!batch.agent_id().empty() && !peer.MaySpeakFor(batch.agent_id())) {
    stats_.streams_denied.Increment();
    ChargeRefused(peer, batch.agent_id(), encoded_bytes);  // the stream ends either way
    out.denied = "batch " + std::to_string(batch.batch_seq()) + " for agent_id '" +
                 batch.agent_id().substr(0, 64) + "' from " + peer.Describe();
    return out;
  }
  if (!batch.agent_id().empty() &&
      !quota_.Take(batch.agent_id(), encoded_bytes, clock_.MonotonicNow())) {
    stats_.streams_over_quota.Increment();
    out.over_quota = "agent '" + batch.agent_id().substr(0, 64) + "' is over its quota of " +
                     std::to_string(static_cast<std::uint64_t>(options_.quota.bytes_per_second)) +
                     " bytes/s; retry after a backoff";
    return out;
  }
  std::shared_ptr<const KnownAgent> agent =
      batch.agent_id().empty() || batch.agent_id().size() > kMaxNameBytes
          ? nullptr
          : agents_.Find(batch.agent_id(), batch.boot_id());
  // Packed results become messages first: the validator and all after read those.
  std::optional<Rejection> rejection = ExpandPacked(batch, encoded_bytes, options_.limits);
  if (!rejection) {
    rejection = ValidateBatch(batch, encoded_bytes, agent ? &agent->nics : nullptr,
                              clock_.RealtimeNow(), options_.limits);
  }
  if (!rejection) rejection = CheckAsked(batch);
  if (!rejection) {
    ClearStamps(batch);
    out.agent = std::move(agent);
    return out;
  }
  // A refused batch is paid for from its sender's allowance for refused
  // bytes. One that finds the allowance clear is acked REJECTED whatever its
  // size, so an honest agent drops it and never resends it; if it put the
  // allowance in debt the stream ends too, and the peer's next stream waits
  // until the debt is paid. One sent while in debt gets no ack.
  const AgentQuota::Taken charged = ChargeRefused(peer, batch.agent_id(), encoded_bytes);
  if (charged != AgentQuota::Taken::kHeld) {
    stats_.streams_over_quota.Increment();
    out.over_quota = "agent '" + batch.agent_id().substr(0, 64) +
                     "' sent more refused batches than it may (" +
                     std::to_string(static_cast<std::uint64_t>(options_.refused_burst_bytes)) +
                     " bytes, refilled at " +
                     std::to_string(static_cast<std::uint64_t>(options_.refused_bytes_per_second)) +
                     " bytes/s); the last: " + rejection->message;
    if (charged == AgentQuota::Taken::kAlreadyOwed) return out;
  }
  stats_.Rejected(rejection->reason).Increment();
  v1::UploadAck& ack = out.rejected.emplace();
  ack.set_batch_seq(batch.batch_seq());
  ack.set_status(v1::UploadAck::STATUS_REJECTED);
  ack.set_error(std::string(RejectReasonName(rejection->reason)) + ": " + rejection->message);
  return out;
}

void IngestHandler::ClearStamps(v1::UploadBatch& batch) {
  const std::size_t cleared = ClearContradictoryStamps(batch);
  if (cleared == 0) return;
  stats_.stamps_cleared.Increment(static_cast<double>(cleared));
  const std::optional<std::uint64_t> warn = NoteWarn(stamps_warn_, cleared);
  if (warn) {
    spdlog::warn(
        "ingest: {} stamp pair(s) of probe results cleared in the last minute, the latest from "
        "agent '{}': receive read before send by more than the stated clock error (software "
        "stamps or a clock step); those probes count, their latency is unknown "
        "(hostmesh_ingest_result_stamps_cleared_total)",
        *warn, batch.agent_id().substr(0, 64));
  }
}

bool IngestHandler::TakeInFlight(std::size_t bytes) {
  const bool taken = in_flight_.TryTake(bytes);
  stats_.in_flight_bytes.Set(static_cast<double>(in_flight_.held()));
  return taken;
}

void IngestHandler::GiveInFlight(std::size_t bytes) {
  in_flight_.Give(bytes);
  stats_.in_flight_bytes.Set(static_cast<double>(in_flight_.held()));
}

void IngestHandler::Commit(std::shared_ptr<store::CommitLane> lane, store::OwnedBatch batch,
                           std::shared_ptr<const KnownAgent> agent, AckDone done) {
  committer_.Submit(
      std::move(lane), std::move(batch),
      [this, agent = std::move(agent), done = std::move(done)](const store::CommitReport& report,
                                                               v1::UploadBatch& b) {
        stats_.store_write_seconds.Observe(std::chrono::duration<double>(report.latency).count());
        v1::UploadAck ack;
        ack.set_batch_seq(b.batch_seq());
        switch (report.outcome.status) {
          case store::CommitStatus::kStored:
            if (sink_ != nullptr) sink_->OnBatch(b, agent->hello);
            stats_.batches_accepted.Increment();
            stats_.results_accepted.Increment(b.results_size());
            stats_.paths_accepted.Increment(b.paths_size());
            stats_.telemetry_accepted.Increment(b.telemetry_size());
            stats_.commit_group_batches.Observe(static_cast<double>(report.group_batches));
            ack.set_status(v1::UploadAck::STATUS_ACCEPTED);
            done(std::move(ack), {});
            return;
          case store::CommitStatus::kDuplicate:
            stats_.batches_duplicate.Increment();
            stats_.results_duplicate.Increment(b.results_size());
            ack.set_status(v1::UploadAck::STATUS_DUPLICATE);
            done(std::move(ack), {});
            return;
          case store::CommitStatus::kFailed:
            stats_.store_failures.Increment();
            done(std::nullopt, "store write failed: " + report.outcome.error);
            return;
        }
      });
}

}  // namespace hostmesh::analyzer::ingest
