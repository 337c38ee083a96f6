// The AgentIngest protocol without gRPC: Hello, and per batch validate ->
// commit -> ack. The gRPC service (ingest_service.h) only moves messages
// between the wire and this class.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "analyzer/ingest/agent_directory.h"
#include "analyzer/ingest/batch_validator.h"
#include "analyzer/ingest/ingest_sink.h"
#include "analyzer/ingest/ingest_stats.h"
#include "analyzer/store/group_committer.h"
#include "analyzer/store/store.h"
#include "common/base/clock.h"

namespace hostmesh::analyzer::ingest {

struct IngestOptions {
  ValidationLimits limits;
  std::string analyzer_version = "hostmesh-analyzer";
  // Batches of one stream being committed at once: enough to keep the stream
  // busy across an fsync, few enough to bound memory per agent.
  std::size_t max_in_flight_per_stream = 8;
};

enum class HelloCode { kOk, kFailedPrecondition, kInvalidArgument, kUnavailable };
struct HelloOutcome {
  HelloCode code = HelloCode::kOk;
  std::string message;
};

class IngestHandler {
 public:
  // `sink` may be null. Everything passed by reference must outlive the handler.
  IngestHandler(const Clock& clock, store::Store& store, store::GroupCommitter& committer,
                IngestStats& stats, IngestSink* sink, IngestOptions options);

  // Unknown schema version: kFailedPrecondition. Records the Hello (its NICs
  // are what later batches are checked against) and fills the reply.
  HelloOutcome Hello(const v1::AgentHello& hello, v1::HelloReply& reply);

  // Validates a batch; returns the REJECTED ack (already counted) or nullopt
  // when it may be committed.
  std::optional<v1::UploadAck> Screen(const v1::UploadBatch& batch);

  // Commits a screened batch. `done` runs on the committer thread with the
  // ACCEPTED or DUPLICATE ack, or with nullopt and the error when the store
  // failed (the stream must then end: resending later may work).
  using AckDone = std::function<void(std::optional<v1::UploadAck> ack, const std::string& error)>;
  void Commit(std::shared_ptr<store::CommitLane> lane, store::OwnedBatch batch, AckDone done);

  const IngestOptions& options() const { return options_; }
  IngestStats& stats() { return stats_; }

 private:
  const Clock& clock_;
  store::Store& store_;
  store::GroupCommitter& committer_;
  IngestStats& stats_;
  IngestSink* const sink_;
  const IngestOptions options_;
  AgentDirectory agents_;
};

}  // namespace hostmesh::analyzer::ingest
