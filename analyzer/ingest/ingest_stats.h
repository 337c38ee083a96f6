// The ingest counters, declared once on the process registry.
#pragma once

#include <array>

#include "analyzer/ingest/batch_validator.h"
#include "common/metrics/registry.h"

namespace hostmesh::analyzer::ingest {

struct IngestStats {
  explicit IngestStats(metrics::Registry& registry);

  metrics::Counter& hellos;
  metrics::Counter& hellos_refused;
  metrics::Counter& batches_accepted;
  metrics::Counter& results_accepted;
  metrics::Counter& paths_accepted;
  metrics::Counter& telemetry_accepted;
  metrics::Counter& batches_duplicate;
  metrics::Counter& results_duplicate;
  metrics::Family<metrics::Counter>& batches_rejected;
  // Children of batches_rejected, one per reason, made up front so every
  // reason is exported (as 0) and the hot path takes no lock.
  std::array<metrics::Counter*, kRejectReasonCount> rejected_by_reason{};
  metrics::Counter& bytes;  // of every batch received, encoded size
  metrics::Counter& store_failures;
  metrics::Histogram& store_write_seconds;  // from submit to durable, per batch
  metrics::Histogram& commit_group_batches;
  metrics::Gauge& streams_open;

  metrics::Counter& Rejected(RejectReason reason) const {
    return *rejected_by_reason[static_cast<std::size_t>(reason)];
  }
};

}  // namespace hostmesh::analyzer::ingest
