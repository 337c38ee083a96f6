#include "analyzer/ingest/ingest_handler.h"

#include <chrono>
#include <utility>

#include "analyzer/store/store_keys.h"

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
      agents_(store) {}

HelloOutcome IngestHandler::Hello(const v1::AgentHello& hello, v1::HelloReply& reply) {
  if (auto error = CheckSchemaVersion(hello.schema_version())) {
    stats_.hellos_refused.Increment();
    return {HelloCode::kFailedPrecondition, *error};
  }
  if (hello.agent_id().empty() || hello.agent_id().size() > store::kMaxAgentIdBytes) {
    stats_.hellos_refused.Increment();
    return {HelloCode::kInvalidArgument,
            "agent_id must have 1 to " + std::to_string(store::kMaxAgentIdBytes) + " bytes, got " +
                std::to_string(hello.agent_id().size())};
  }
  if (const store::StoreStatus s = store_.PutHello(hello); !s.ok()) {
    return {HelloCode::kUnavailable, s.error};
  }
  agents_.Remember(hello);
  stats_.hellos.Increment();
  reply.set_schema_version(v1::SCHEMA_VERSION_1);
  reply.set_analyzer_version(options_.analyzer_version);
  reply.set_last_durable_batch_seq(store_.LastDurableBatchSeq(hello.agent_id(), hello.boot_id()));
  return {};
}

std::optional<v1::UploadAck> IngestHandler::Screen(const v1::UploadBatch& batch) {
  const std::size_t bytes = batch.ByteSizeLong();
  stats_.bytes.Increment(static_cast<double>(bytes));
  const std::shared_ptr<const AgentNics> agent =
      batch.agent_id().empty() ? nullptr : agents_.Find(batch.agent_id(), batch.boot_id());
  std::optional<Rejection> rejection =
      ValidateBatch(batch, bytes, agent.get(), clock_.RealtimeNow(), options_.limits);
  if (!rejection) return std::nullopt;
  stats_.Rejected(rejection->reason).Increment();
  v1::UploadAck ack;
  ack.set_batch_seq(batch.batch_seq());
  ack.set_status(v1::UploadAck::STATUS_REJECTED);
  ack.set_error(std::string(RejectReasonName(rejection->reason)) + ": " + rejection->message);
  return ack;
}

void IngestHandler::Commit(std::shared_ptr<store::CommitLane> lane, store::OwnedBatch batch,
                           AckDone done) {
  committer_.Submit(
      std::move(lane), std::move(batch),
      [this, done = std::move(done)](const store::CommitReport& report, v1::UploadBatch& b) {
        stats_.store_write_seconds.Observe(std::chrono::duration<double>(report.latency).count());
        v1::UploadAck ack;
        ack.set_batch_seq(b.batch_seq());
        switch (report.outcome.status) {
          case store::CommitStatus::kStored:
            if (sink_ != nullptr) sink_->OnBatch(b);
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
