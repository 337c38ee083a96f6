// The analyzer process minus flags: store, group committer, ingest (gRPC),
// the analysis feed, the loop that judges windows, and HTTP (API + /metrics).
// main.cc parses flags and signals; tests run the same app in-process.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "analyzer/analysis/incidents.h"
#include "analyzer/api/api_snapshot.h"
#include "analyzer/config/analyzer_config.h"
#include "analyzer/evidence/evidence_keeper.h"
#include "analyzer/evidence/evidence_writer.h"
#include "analyzer/feed/analysis_feed.h"
#include "analyzer/feed/diagnosis_step.h"
#include "analyzer/feed/state_keeper.h"
#include "analyzer/ingest/ingest_handler.h"
#include "analyzer/ingest/ingest_server.h"
#include "analyzer/ingest/ingest_stats.h"
#include "analyzer/ingest/listener_recovery.h"
#include "analyzer/store/group_committer.h"
#include "analyzer/store/store.h"
#include "common/base/clock.h"
#include "common/base/exit_codes.h"
#include "common/http/server.h"
#include "common/metrics/registry.h"
#include "topology/topology.h"

namespace hostmesh::analyzer::app {

struct AnalyzerAppOptions {
  std::string version = "unknown";
  std::chrono::nanoseconds tick = std::chrono::seconds{1};  // Advance period
  std::chrono::nanoseconds retention_period = std::chrono::hours{1};
  // Resolved incidents stay visible in the API this long.
  std::chrono::nanoseconds resolved_visible = std::chrono::hours{24};
  // Between two rebuilds of an ingest server whose listener gRPC dropped
  // (listener_recovery.h).
  std::chrono::nanoseconds ingest_relisten_gap = std::chrono::seconds{30};
  // Called at every turn of the main loop: the systemd watchdog's proof of life.
  std::function<void(MonoTime)> heartbeat;
};

class AnalyzerApp {
 public:
  // Everything passed by reference must outlive the app.
  AnalyzerApp(AnalyzerConfig config, AnalyzerAppOptions options, const Clock& clock,
              metrics::Registry& registry);
  ~AnalyzerApp();
  AnalyzerApp(const AnalyzerApp&) = delete;
  AnalyzerApp& operator=(const AnalyzerApp&) = delete;

  // Loads the inventory, opens the store, starts gRPC and HTTP. False with
  // *error on failure (what started is stopped again by Shutdown/destruction).
  bool Start(std::string* error);
  // After Start failed, the process's exit code (common/base/exit_codes.h):
  // kExitConfig when a file must be fixed (the inventory), else kExitFailure.
  int start_exit_code() const { return start_exit_code_; }
  // Judges windows every tick until `stop_fd` (a signalfd or eventfd) is
  // readable, then shuts down.
  void Run(int stop_fd);
  // One loop iteration: advance the analysis, update incidents, publish.
  void Tick();
  // gRPC first (no new batches), then HTTP, then the committer and the store.
  // Idempotent.
  void Shutdown();

  int grpc_port() const;
  int http_port() const;
  // Where the incidents' evidence keeper asks agents for their flight
  // recorders (CaptureOutbox::Request(agent_id, request)); the requests ride
  // on the acks of the agents' upload streams. Valid from construction on.
  ingest::CaptureOutbox& captures() { return *captures_; }
  // The store, for reading what the agents sent (Store::ScanFlightRecords).
  const store::Store* store() const { return store_.get(); }
  const api::SnapshotHolder& snapshots() const { return snapshots_; }

 private:
  // The phases of Start, in order.
  bool LoadInventory(std::string* error);
  bool OpenStore(std::string* error);
  void StartIngestHandler();
  bool ServeHttp(std::string* error);
  bool ServeIngest(bool* insecure, std::string* error);
  // Rebuilds host ids, incidents and unjudged windows from the store.
  void Restore();
  // Without an inventory: the fabric learned by the previous run, before the replay.
  void RestoreLearned();
  // Without an inventory: the learned fabric into the store when it changed.
  void SaveLearned();
  // gRPC dropped the ingest listener (grpc_listener_watch.h): the server is
  // rebuilt on the same port, or retried after the recovery's gap.
  void RelistenIngest();
  void Publish(std::shared_ptr<const analysis::WindowReport> latest);
  // After a window's incidents are updated and diagnosed: what their evidence keeps.
  void KeepEvidence(const analysis::WindowReport& report,
                    const std::vector<std::uint64_t>& touched);
  // Each turn: a slice of the path table for incidents awaiting their 5-tuples.
  void StepEvidence();
  // To the writer; the involved agents asked for their flight recorders.
  void SubmitEvidence(std::vector<evidence::EvidenceEvent> events);

  const AnalyzerConfig config_;
  const AnalyzerAppOptions options_;
  const Clock& clock_;
  metrics::Registry& registry_;
  const WallTime started_;

  std::optional<topology::Topology> topology_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<store::GroupCommitter> committer_;
  std::unique_ptr<AnalysisFeed> feed_;
  std::unique_ptr<StateKeeper> state_;
  std::unique_ptr<DiagnosisStep> diagnosis_;
  std::unique_ptr<evidence::EvidenceWriter> evidence_writer_;  // with the store
  std::unique_ptr<ingest::IngestStats> ingest_stats_;
  // Before handler_ and grpc_: the upload streams attach its requests to acks.
  std::unique_ptr<ingest::CaptureOutbox> captures_;
  std::unique_ptr<ingest::IngestHandler> handler_;
  std::unique_ptr<ingest::IngestServer> grpc_;
  std::unique_ptr<http::ServerStats> http_stats_;  // before http_, which counts there
  std::unique_ptr<http::Server> http_;
  // Read by /readyz on the HTTP server's threads.
  std::atomic<bool> ingest_listening_{false};

  // Touched by the loop thread only.
  analysis::IncidentTracker incidents_;
  evidence::EvidenceKeeper evidence_keeper_;
  std::shared_ptr<const analysis::WindowReport> latest_;
  MonoTime next_retention_{};
  std::shared_ptr<const api::InventoryView> inventory_view_;  // built once; null without
  std::uint64_t learned_stored_version_ = 0;
  std::uint64_t learned_write_errors_ = 0;
  std::uint64_t untallied_seen_ = 0;       // AnalysisStats::port_probes_untallied, last window
  std::uint64_t route_overflow_seen_ = 0;  // AnalysisStats::route_draws_overflow, last window
  bool port_tally_capped_ = false;
  ingest::ListenerRecovery listener_recovery_;
  prometheus::Counter* listener_restarts_ = nullptr;  // declared by ServeIngest
  int start_exit_code_ = kExitFailure;

  api::SnapshotHolder snapshots_;
};

}  // namespace hostmesh::analyzer::app
