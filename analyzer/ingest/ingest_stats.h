// The ingest counters, declared once on the process registry.
#pragma once

#include <array>

#include "analyzer/ingest/batch_validator.h"
#include "common/metrics/registry.h"

namespace hostmesh::analyzer::ingest {

struct IngestStats {
  explicit IngestStats(metrics::Registry& registry);

  prometheus::Counter& hellos;
  prometheus::Counter& hellos_refused;
  prometheus::Counter& batches_accepted;
  prometheus::Counter& results_accepted;
  prometheus::Counter& paths_accepted;
  prometheus::Counter& telemetry_accepted;
  prometheus::Counter& batches_duplicate;
  prometheus::Counter& results_duplicate;
  prometheus::Family<prometheus::Counter>& batches_rejected;
  // Children of batches_rejected, one per reason, made up front so every
  // reason is exported (as 0) and the hot path takes no lock.
  std::array<prometheus::Counter*, kRejectReasonCount> rejected_by_reason{};
  prometheus::Counter& bytes;  // of every batch received, encoded size
  prometheus::Counter& store_failures;
  prometheus::Histogram& store_write_seconds;  // from submit to durable, per batch
  prometheus::Histogram& commit_group_batches;
  prometheus::Gauge& streams_open;
  // Calls refused for who sent them: a Hello or batch for a host or agent id
  // the peer's certificate does not name.
  prometheus::Counter& hellos_denied;
  prometheus::Counter& streams_denied;
  // Streams ended early: over the in-flight byte limit, or a message that is
  // not an UploadBatch.
  prometheus::Counter& streams_overloaded;
  prometheus::Counter& streams_over_quota;
  prometheus::Counter& streams_garbage;
  // Upload streams refused at their start: their certificate already held
  // grpc.max_streams_per_agent streams open.
  prometheus::Counter& streams_refused;
  // Agents' Hellos dropped from memory to keep it within its bound
  // (agent_directory.h): read back from the store at their next batch.
  prometheus::Counter& hellos_dropped;
  // Stamp pairs of accepted results cleared for reading receive before send.
  prometheus::Counter& stamps_cleared;
  prometheus::Gauge& in_flight_bytes;
  prometheus::Gauge& insecure;  // 1 when ingest runs without TLS (grpc.insecure)

  prometheus::Counter& Rejected(RejectReason reason) const {
    return *rejected_by_reason[static_cast<std::size_t>(reason)];
  }
};

}  // namespace hostmesh::analyzer::ingest
