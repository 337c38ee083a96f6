#include "analyzer/ingest/ingest_stats.h"

#include "common/metrics/buckets.h"

namespace hostmesh::analyzer::ingest {

IngestStats::IngestStats(metrics::Registry& r)
    : hellos(r.AddCounter("hostmesh_ingest_hellos_total", "Agent Hellos answered.")),
      hellos_refused(r.AddCounter("hostmesh_ingest_hellos_refused_total",
                                  "Agent Hellos refused as invalid (unknown schema version, bad "
                                  "names, sizes or NICs).")),
      batches_accepted(r.AddCounter("hostmesh_ingest_batches_accepted_total",
                                    "Upload batches made durable and acknowledged.")),
      results_accepted(r.AddCounter("hostmesh_ingest_results_accepted_total",
                                    "Probe results in accepted batches.")),
      paths_accepted(r.AddCounter("hostmesh_ingest_paths_accepted_total",
                                  "Path reports in accepted batches.")),
      telemetry_accepted(r.AddCounter("hostmesh_ingest_telemetry_accepted_total",
                                      "NIC telemetry records (counter deltas of one NIC over one "
                                      "agent sampling period) in accepted batches.")),
      batches_duplicate(
          r.AddCounter("hostmesh_ingest_batches_duplicate_total",
                       "Batches already durable (resent by an agent); not stored again.")),
      results_duplicate(r.AddCounter("hostmesh_ingest_results_duplicate_total",
                                     "Probe results in duplicate batches.")),
      batches_rejected(r.AddCounterFamily("hostmesh_ingest_batches_rejected_total",
                                          "Batches rejected as invalid, by reason.")),
      bytes(r.AddCounter("hostmesh_ingest_bytes_total",
                         "Encoded bytes of every upload batch received.")),
      store_failures(r.AddCounter("hostmesh_ingest_store_failures_total",
                                  "Batches whose store write failed (the stream is closed).")),
      store_write_seconds(r.AddHistogram(
          "hostmesh_ingest_store_write_seconds",
          "Time from handing a batch to the store until it is durable (group commit).",
          metrics::ExponentialBucketsRange(1e-4, 10, 16))),
      commit_group_batches(
          r.AddHistogram("hostmesh_ingest_commit_group_batches",
                         "Batches in the synced store write that carried each accepted batch.",
                         metrics::ExponentialBuckets(1, 2, 10))),
      streams_open(r.AddGauge("hostmesh_ingest_streams_open", "Upload streams open now.")),
      hellos_denied(r.AddCounter("hostmesh_ingest_hellos_denied_total",
                                 "Hellos refused with PERMISSION_DENIED: their host or agent id "
                                 "is not named by the caller's certificate.")),
      streams_denied(r.AddCounter("hostmesh_ingest_streams_denied_total",
                                  "Upload streams ended with PERMISSION_DENIED: a batch for an "
                                  "agent id the caller's certificate does not name.")),
      streams_overloaded(r.AddCounter(
          "hostmesh_ingest_streams_overloaded_total",
          "Upload streams ended with RESOURCE_EXHAUSTED: the bytes in flight across all streams "
          "were at grpc.max_in_flight_bytes (agents keep their data and retry).")),
      streams_over_quota(r.AddCounter(
          "hostmesh_ingest_streams_over_quota_total",
          "Upload streams ended with RESOURCE_EXHAUSTED: their agent sent more bytes than its "
          "quota (grpc.agent_bytes_per_second, grpc.agent_burst_bytes).")),
      streams_garbage(r.AddCounter("hostmesh_ingest_streams_garbage_total",
                                   "Upload streams ended with INVALID_ARGUMENT: a message that "
                                   "does not parse as an UploadBatch.")),
      streams_refused(r.AddCounter(
          "hostmesh_ingest_streams_refused_total",
          "Upload streams refused with RESOURCE_EXHAUSTED at their start: their certificate "
          "already held grpc.max_streams_per_agent streams open, or opened more than "
          "grpc.stream_opens_per_minute.")),
      hellos_dropped(r.AddCounter(
          "hostmesh_ingest_hellos_dropped_total",
          "Agents' Hellos dropped from the analyzer's memory to keep it within its bound (64 MiB, "
          "about 60,000 agents of 8 NICs): read back from the store at their next batch. Made-up "
          "agent ids under grpc.insecure, or a fleet larger than the bound.")),
      stamps_cleared(r.AddCounter(
          "hostmesh_ingest_result_stamps_cleared_total",
          "Stamp pairs of accepted probe results (NIC send and receive, or application send "
          "and receive) cleared because the receive read before the send by more than the "
          "stated clock error: the probe counts, its latency is unknown.")),
      in_flight_bytes(r.AddGauge("hostmesh_ingest_in_flight_bytes",
                                 "Memory held by batches read and not yet durable.")),
      insecure(r.AddGauge("hostmesh_ingest_insecure",
                          "1 when agents upload over plaintext gRPC without authentication "
                          "(grpc.insecure: true): anyone who reaches the port can write "
                          "verdicts.")) {
  for (std::size_t i = 0; i < kRejectReasonCount; ++i) {
    rejected_by_reason[i] = &batches_rejected.Add(
        {{"reason", std::string(RejectReasonName(static_cast<RejectReason>(i)))}});
  }
}

}  // namespace hostmesh::analyzer::ingest
