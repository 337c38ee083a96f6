#include "analyzer/main/analyzer_app.h"

#include <poll.h>

#include <utility>

#include "analyzer/api/api_handlers.h"
#include "analyzer/feed/telemetry_query.h"
#include "analyzer/feed/topology_view.h"
#include "analyzer/ingest/grpc_listener_watch.h"
#include "analyzer/main/analyzer_metrics.h"
#include "analyzer/main/config_json.h"
#include "analyzer/state/learned_fabric_codec.h"
#include "common/base/logging.h"
#include "common/base/proc_stats.h"
#include "common/config/config_error.h"
#include "common/http/metrics_endpoint.h"
#include "common/http/server_config.h"
#include "common/tls/cert_expiry_metrics.h"
#include "topology/inventory_loader.h"

namespace hostmesh::analyzer::app {

AnalyzerApp::AnalyzerApp(AnalyzerConfig config, AnalyzerAppOptions options, const Clock& clock,
                         metrics::Registry& registry)
    : config_(std::move(config)),
      options_(std::move(options)),
      clock_(clock),
      registry_(registry),
      started_(clock.RealtimeNow()),
      captures_(std::make_unique<ingest::CaptureOutbox>(clock)),
      incidents_(config_.analysis),
      evidence_keeper_(config_.evidence),
      listener_recovery_(options_.ingest_relisten_gap) {}

AnalyzerApp::~AnalyzerApp() {
  Shutdown();
}

bool AnalyzerApp::Start(std::string* error) {
  const auto log = GetLogger("analyzer");
  if (!LoadInventory(error) || !OpenStore(error)) return false;
  StartIngestHandler();
  RegisterAnalyzerMetrics(registry_, snapshots_, clock_);
  RegisterStoreMetrics(registry_, *store_);
  Publish(nullptr);
  if (!ServeHttp(error)) return false;
  bool insecure = false;
  if (!ServeIngest(&insecure, error)) return false;
  ingest_listening_.store(true, std::memory_order_relaxed);
  if (!config_.http.bearer_token_file.empty() && !config_.http.tls()) {
    log->warn(
        "http.bearer_token_file without http.tls: the token crosses the network in clear text");
  }
  next_retention_ = clock_.MonotonicNow() + options_.retention_period;
  log->info("listening: gRPC {} ({}) HTTP {}; data {}; window {} s grace {} s", grpc_->port(),
            insecure ? "plaintext" : "mutual TLS", http_->endpoints().front().ToString(),
            config_.data_dir.string(),
            std::chrono::duration<double>(config_.analysis.window).count(),
            std::chrono::duration<double>(config_.analysis.grace).count());
  return true;
}

bool AnalyzerApp::LoadInventory(std::string* error) {
  const auto log = GetLogger("analyzer");
  if (!config_.inventory.empty()) {
    try {
      topology_ = topology::LoadInventoryFile(config_.inventory);
    } catch (const config::ConfigError& e) {
      // Restarting will not mend the file: the unit stops, not loops.
      *error = e.what();
      start_exit_code_ = kExitConfig;
      return false;
    } catch (const std::exception& e) {
      *error = config_.inventory.string() + ": " + e.what();
      return false;
    }
    inventory_view_ = std::make_shared<const api::InventoryView>(ViewOf(*topology_, false));
    log->info("inventory {}: {} devices, {} links", config_.inventory.string(),
              topology_->devices().size(), topology_->links().size());
  } else {
    log->warn(
        "no inventory: the fabric is learned from the agents' traceroutes; links and switches are "
        "named by their addresses, and nothing checks the cabling against a plan");
  }

  return true;
}

// The store and what is rebuilt from it: the feed, the state keeper, the
// learned fabric (without an inventory), the diagnosis, the last state.
bool AnalyzerApp::OpenStore(std::string* error) {
  store::StoreOptions store_options;
  store_options.data_dir = config_.data_dir;
  store_options.raw_retention = config_.raw_retention;
  store_options.summary_retention = config_.summary_retention;
  std::string store_error;
  store_ = store::Store::Open(clock_, store_options, store_error);
  if (!store_) {
    *error = "store " + config_.data_dir.string() + ": " + store_error;
    return false;
  }
  committer_ = std::make_unique<store::GroupCommitter>(clock_, *store_);
  feed_ =
      std::make_unique<AnalysisFeed>(*store_, config_.analysis, topology_ ? &*topology_ : nullptr);
  state_ = std::make_unique<StateKeeper>(*store_, clock_);
  if (!topology_) RestoreLearned();
  diagnosis_ = std::make_unique<DiagnosisStep>(*store_, topology_ ? &*topology_ : nullptr);
  evidence_writer_ = std::make_unique<evidence::EvidenceWriter>(*store_, clock_, config_.evidence);
  evidence_writer_->Start();
  Restore();
  return true;
}

void AnalyzerApp::StartIngestHandler() {
  ingest_stats_ = std::make_unique<ingest::IngestStats>(registry_);
  ingest::IngestOptions ingest_options;
  ingest_options.analyzer_version = "hostmesh-analyzer " + options_.version;
  // Older than raw retention: it would be deleted on arrival.
  ingest_options.limits.max_age = config_.raw_retention;
  ingest_options.max_in_flight_bytes = config_.grpc_max_in_flight_bytes;
  ingest_options.quota.bytes_per_second = static_cast<double>(config_.grpc_agent_bytes_per_second);
  ingest_options.quota.burst_bytes = static_cast<double>(config_.grpc_agent_burst_bytes);
  ingest_options.max_streams_per_peer = config_.grpc_max_streams_per_agent;
  ingest_options.stream_opens_per_minute = config_.grpc_stream_opens_per_minute;
  ingest_options.refused_burst_bytes = static_cast<double>(config_.grpc_refused_burst_bytes);
  ingest_options.refused_bytes_per_second =
      static_cast<double>(config_.grpc_refused_bytes_per_second);
  ingest_options.refusal_delay =
      std::chrono::duration_cast<std::chrono::milliseconds>(config_.grpc_refusal_delay);
  ingest_options.max_streams_per_connection = config_.grpc_max_streams_per_connection;
  ingest_options.captures = captures_.get();
  handler_ = std::make_unique<ingest::IngestHandler>(clock_, *store_, *committer_, *ingest_stats_,
                                                     feed_.get(), ingest_options);
}

bool AnalyzerApp::ServeHttp(std::string* error) {
  const auto log = GetLogger("analyzer");
  http::Router router;
  api::MountApi(
      router, [this] { return snapshots_.Get(); }, clock_,
      [this](std::int64_t from, std::int64_t to, std::size_t limit, bool* truncated) {
        return state_->History(from, to, limit, truncated);
      },
      [this](const api::TelemetryQuery& query) { return QueryTelemetry(*store_, query); },
      [this](std::uint64_t id) {
        api::EvidenceAnswer answer;
        if (auto stored = evidence::ReadEvidence(*store_, id, &answer.error)) {
          answer.found = true;
          answer.header = std::move(stored->header);
          answer.parts = std::move(stored->parts);
        }
        if (answer.found) {
          const store::StoreStatus status =
              store_->ScanFlightRecords(id, [&](const store::StoredFlightRecord& r) {
                answer.flight_records.emplace_back(std::string(r.agent_id), *r.record);
                return true;
              });
          // Records that did not parse are named in the status; the rest stand.
          if (!status.ok()) answer.flight_record_error = status.error;
        }
        return answer;
      });
  // The effective config, secrets left out: for support bundles.
  router.Get("/api/v1/config",
             [body = RenderConfigJson(config_, options_.version)](const http::Request&) {
               http::Response response;
               response.content_type = "application/json";
               response.body = body;
               return response;
             });
  http::MountMetrics(router, registry_);
  http::ServerOptions http_options;
  http_options.listen_addresses = {config_.http_listen.ToString()};
  http::ApplyHttpServerConfig(config_.http, http_options);
  http_stats_ = std::make_unique<http::ServerStats>(registry_);
  http_options.stats = http_stats_.get();
  // Ready once the store is open (above) and the ingest server listens
  // (below, after this server starts): until then agents cannot upload.
  http_options.ready = [this]() -> std::string {
    return ingest_listening_.load(std::memory_order_relaxed) ? ""
                                                             : "the ingest server is not listening";
  };
  http_options.log = [log](std::string_view message) { log->warn("{}", message); };
  http_options.log_info = [log](std::string_view message) { log->info("{}", message); };
  std::string http_error;
  http_ = http::Server::Start(http_options, std::move(router), &http_error);
  if (!http_) {
    *error = "http: " + http_error;
    return false;
  }
  return true;
}

// The gRPC ingest server with its security, and the certificates' expiry.
bool AnalyzerApp::ServeIngest(bool* insecure, std::string* error) {
  const auto log = GetLogger("analyzer");
  ingest::ServerSecurity security;
  security.insecure = config_.grpc_insecure;
  security.files = config_.grpc_tls;
  security.spiffe_trust_domain = config_.spiffe_trust_domain;
  security.crl_dir = config_.grpc_crl_dir;
  ingest_stats_->insecure.Set(security.insecure ? 1 : 0);
  std::vector<tls::ExpiryFile> expiring;
  if (security.insecure) {
    log->warn(
        "grpc.insecure: agents upload over plaintext gRPC without authentication; anyone who "
        "reaches {} can upload as any agent and write verdicts",
        config_.grpc_listen.ToString());
  } else {
    expiring = tls::ExpiryFilesOf(security.files);
  }
  if (config_.http.tls()) {
    for (tls::ExpiryFile& f : tls::ExpiryFilesOf(
             {config_.http.tls_cert, config_.http.tls_key, config_.http.tls_client_ca}, "http_")) {
      expiring.push_back(std::move(f));
    }
  }
  tls::RegisterCertificateExpiry(registry_, std::move(expiring));
  listener_restarts_ = &registry_.AddCounter(
      "hostmesh_ingest_listener_restarts_total",
      "Ingest servers rebuilt because gRPC stopped accepting on the port (it does for good when "
      "accept fails, as at the open-files limit): every agent reconnected. See "
      "hostmesh_analyzer_process_open_fds.");
  std::string grpc_error;
  grpc_ =
      ingest::IngestServer::Start(*handler_, config_.grpc_listen.ToString(), security, grpc_error);
  if (!grpc_) {
    *error = "grpc " + config_.grpc_listen.ToString() + ": " + grpc_error;
    return false;
  }
  *insecure = security.insecure;
  return true;
}

void AnalyzerApp::RelistenIngest() {
  const auto log = GetLogger("analyzer");
  listener_restarts_->Increment();
  // Counting needs a descriptor of its own: none left means all were in use.
  const std::optional<std::uint64_t> open = CountOpenFiles();
  const std::optional<std::uint64_t> limit = OpenFilesLimit();
  log->error(
      "gRPC stopped accepting agents on port {} (open files: {} of {}): restarting the ingest "
      "server; agents reconnect and resend what was not acknowledged",
      grpc_->port(), open ? std::to_string(*open) : "all", limit ? std::to_string(*limit) : "?");
  ingest_listening_.store(false, std::memory_order_relaxed);
  std::string error;
  // The same grace as a stop: agents resend whatever was not acknowledged.
  if (!grpc_->Relisten(std::chrono::seconds{2}, error)) {
    listener_recovery_.RebuildFailed();
    log->critical(
        "ingest server not restarted ({}): retrying in {} s", error,
        std::chrono::duration_cast<std::chrono::seconds>(options_.ingest_relisten_gap).count());
    return;
  }
  ingest_listening_.store(true, std::memory_order_relaxed);
}

void AnalyzerApp::Restore() {
  const auto log = GetLogger("analyzer");
  const RestoreOptions options{config_.analysis.window, config_.analysis.grace,
                               config_.restore_paths, config_.restore_results,
                               options_.resolved_visible};
  const RestoreSummary r = state_->Restore(options, *feed_, incidents_);
  if (!r.error.empty()) log->warn("restore from {}: {}", config_.data_dir.string(), r.error);
  if (r.bad_records > 0) log->warn("restore: {} stored records did not parse", r.bad_records);
  if (r.hosts == 0 && r.last_judged_end_ns == 0 && r.results == 0) return;  // a new store
  log->info(
      "restored: {} hosts, {} open and {} resolved incidents, {} paths, {} unjudged results; "
      "judging resumes at {} (last judged window ended {})",
      r.hosts, r.open_incidents, r.resolved_incidents, r.paths, r.results,
      r.resumed_at_ns / 1'000'000'000, r.last_judged_end_ns / 1'000'000'000);
}

void AnalyzerApp::RestoreLearned() {
  const auto log = GetLogger("analyzer");
  const std::optional<std::string> bytes = store_->GetLearnedFabric();
  if (!bytes) return;  // a new store, or one kept with an inventory
  std::string error = "the record does not parse";
  const auto state = state::DecodeLearnedFabric(*bytes);
  if (!state || !feed_->RestoreLearned(*state, &error)) {
    // Learned anew: ids in stored incidents may then name other links.
    log->warn("stored learned fabric not restored ({}): learning it anew", error);
    return;
  }
  log->info("learned fabric restored: {} devices, {} links", state->devices.size(),
            state->links.size());
}

void AnalyzerApp::SaveLearned() {
  const auto learned = feed_->LearnedChangedSince(learned_stored_version_);
  if (!learned) return;
  if (const auto status = store_->PutLearnedFabric(state::EncodeLearnedFabric(learned->second));
      !status.ok()) {
    ++learned_write_errors_;
    GetLogger("analyzer")
        ->warn("learned fabric not stored ({}): a restart may renumber it", status.error);
    return;
  }
  learned_stored_version_ = learned->first;
}

void AnalyzerApp::Tick() {
  if (grpc_ && listener_recovery_.Due(ingest::GrpcListenerFailures(), clock_.MonotonicNow())) {
    RelistenIngest();
  }
  const std::int64_t now = clock_.RealtimeNow().time_since_epoch().count();
  std::vector<analysis::WindowReport> reports = feed_->Advance(now);
  if (!topology_) SaveLearned();  // before the reports naming its ids are stored
  for (analysis::WindowReport& report : reports) {
    const std::vector<std::uint64_t> touched = incidents_.Update(report);
    diagnosis_->Run(report, *feed_->Hosts(), incidents_, feed_->LearnedGraph(),
                    feed_->TakeSendFailures(report.start_ns));
    state_->Save(report, touched, incidents_, *feed_);
    KeepEvidence(report, touched);
    latest_ = std::make_shared<const analysis::WindowReport>(std::move(report));
  }
  if (!reports.empty()) {
    incidents_.Prune((clock_.RealtimeNow() - options_.resolved_visible).time_since_epoch().count());
    // Warned when the port tallies start to overflow, not every window they do.
    const std::uint64_t untallied = feed_->analysis_stats().port_probes_untallied;
    if (untallied > untallied_seen_ && !port_tally_capped_) {
      GetLogger("analyzer")
          ->warn(
              "per-port tallies of watched links are full: {} probes of further source ports "
              "not tallied (the ACL rule reads the first 1024 ports of a link per window)",
              untallied - untallied_seen_);
    }
    port_tally_capped_ = untallied > untallied_seen_;
    untallied_seen_ = untallied;
    const std::uint64_t overflow = feed_->analysis_stats().route_draws_overflow;
    if (overflow > route_overflow_seen_) {
      GetLogger("analyzer")
          ->warn(
              "route watch full: {} cut-short first traces counted without awaiting their "
              "outcome (withdrawn links are named later)",
              overflow - route_overflow_seen_);
    }
    route_overflow_seen_ = overflow;
  }
  Publish(latest_);
  // After the verdicts are out: a slice of the path table for the evidence
  // of incidents that opened (evidence_keeper.h).
  StepEvidence();
  if (clock_.MonotonicNow() >= next_retention_) {
    next_retention_ = clock_.MonotonicNow() + options_.retention_period;
    if (const auto status = store_->EnforceRetention(); !status.ok()) {
      GetLogger("analyzer")->warn("retention: {}", status.error);
    }
  }
}

void AnalyzerApp::KeepEvidence(const analysis::WindowReport& report,
                               const std::vector<std::uint64_t>& touched) {
  const auto agent_of = [this](analysis::HostId host) { return feed_->AgentOf(host); };
  SubmitEvidence(feed_->WithAnalysis([&](const analysis::Analysis& analysis) {
    return evidence_keeper_.OnWindow(report, touched, incidents_, analysis.fabric(), agent_of);
  }));
}

void AnalyzerApp::StepEvidence() {
  if (evidence_keeper_.sampling() == 0) return;
  const auto agent_of = [this](analysis::HostId host) { return feed_->AgentOf(host); };
  SubmitEvidence(feed_->WithAnalysis([&](const analysis::Analysis& analysis) {
    return evidence_keeper_.Step(analysis.paths(), analysis.fabric(), agent_of);
  }));
}

void AnalyzerApp::SubmitEvidence(std::vector<evidence::EvidenceEvent> events) {
  for (evidence::EvidenceEvent& event : events) {
    // The involved agents' flight recorders, asked once, at the first capture:
    // from `before` the fault to now, while their rings still hold it.
    for (const std::string& agent : event.flight_record_agents) {
      v1::CaptureRequest request;
      request.set_incident_id(event.incident_id);
      request.set_from_ns(event.capture_from_ns);
      request.set_to_ns(event.capture_to_ns);
      captures_->Request(agent, request);
    }
    evidence_writer_->Submit(std::move(event));
  }
}

void AnalyzerApp::Publish(std::shared_ptr<const analysis::WindowReport> latest) {
  auto snapshot = std::make_shared<api::ApiSnapshot>();
  snapshot->version = options_.version;
  snapshot->started_ns = started_.time_since_epoch().count();
  snapshot->window_ns = config_.analysis.window.count();
  snapshot->grace_ns = config_.analysis.grace.count();
  snapshot->inventory_loaded = topology_.has_value();
  snapshot->host_table = feed_->Hosts();
  if (topology_) {
    snapshot->topology_source = "inventory";
    snapshot->inventory = inventory_view_;
    snapshot->disagreements = feed_->Disagreements();
    const auto traces = feed_->DisagreeingTraces();
    for (std::size_t k = 0; k < traces.size(); ++k) {
      snapshot->disagreeing_traces.emplace_back(
          topology::DisagreementKindName(static_cast<topology::DisagreementKind>(k)), traces[k]);
    }
  } else {
    snapshot->topology_source = "learned";
    snapshot->inventory = feed_->LearnedView(&snapshot->topology_version);
  }
  snapshot->report = std::move(latest);
  snapshot->stats = feed_->analysis_stats();
  snapshot->state_write_errors = (state_ ? state_->write_errors() : 0) + learned_write_errors_;
  const FeedStats feed = feed_->stats();
  snapshot->feed_events = {
      {"batch", feed.batches},
      {"path_resolved", feed.paths_resolved},
      {"path_unresolved", feed.paths_unresolved},
      {"path_cut_short", feed.paths_cut_short},
      {"path_continued", feed.paths_continued},
      {"path_disagrees_with_inventory", feed.paths_disagreeing},
      {"hello_missing", feed.no_hello},
      {"host_id_not_stored", feed.index_write_errors},
      {"result_dropped_queue_full", feed.queue_dropped},
      {"send_failures_untallied", feed.send_failures_untallied},
      {"diagnosis_without_telemetry", diagnosis_ ? diagnosis_->telemetry_errors() : 0},
      {"diagnosis_telemetry_hosts_capped", diagnosis_ ? diagnosis_->telemetry_hosts_capped() : 0}};
  if (!topology_) {
    const topology::LearnerStats learner = feed_->learner_stats();
    snapshot->feed_events.insert(snapshot->feed_events.end(),
                                 {{"trace_refused_by_learner", learner.refused},
                                  {"learned_switches_merged", learner.merges},
                                  {"learned_merge_refused", learner.merges_refused},
                                  {"trace_refused_learned_fabric_full", learner.refused_full}});
  }
  if (evidence_writer_) {
    const evidence::EvidenceStats& e = evidence_writer_->stats();
    snapshot->evidence_events = {{"window", e.events.load()},
                                 {"capture", e.captures.load()},
                                 {"dropped_queue_full", e.dropped_queue_full.load()},
                                 {"dropped_disk_cap", e.dropped_disk_cap.load()},
                                 {"expired", e.expired.load()},
                                 {"store_error", e.store_errors.load()},
                                 {"probe_thinned", e.thinned_probes.load()}};
    // The flight recorders asked for: queued, sent on an ack, refused, expired;
    // and records refused because nobody asked that agent for them.
    const ingest::CaptureOutboxCounters c = captures_->counters();
    snapshot->evidence_events.insert(snapshot->evidence_events.end(),
                                     {{"flight_record_requested", c.requested},
                                      {"flight_record_request_sent", c.sent},
                                      {"flight_record_request_refused", c.refused},
                                      {"flight_record_request_expired", c.expired},
                                      {"flight_record_unasked", c.unasked}});
    snapshot->evidence_bytes = e.bytes.load();
    snapshot->evidence_incidents = e.incidents.load();
  }
  const std::int64_t keep_after =
      (clock_.RealtimeNow() - options_.resolved_visible).time_since_epoch().count();
  for (const analysis::Incident& inc : incidents_.all()) {
    if (inc.open || inc.resolved_ns >= keep_after) snapshot->incidents.push_back(inc);
  }
  snapshots_.Set(std::move(snapshot));
}

void AnalyzerApp::Run(int stop_fd) {
  const auto tick_ms = std::chrono::duration_cast<std::chrono::milliseconds>(options_.tick);
  MonoTime next = clock_.MonotonicNow();
  for (;;) {
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next - clock_.MonotonicNow());
    pollfd pfd{stop_fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, wait.count() > 0 ? static_cast<int>(wait.count()) : 0);
    if (ready > 0) break;
    if (options_.heartbeat) options_.heartbeat(clock_.MonotonicNow());
    if (clock_.MonotonicNow() >= next) {
      Tick();
      next += tick_ms;
      if (next < clock_.MonotonicNow()) next = clock_.MonotonicNow() + tick_ms;  // fell behind
    }
  }
  GetLogger("analyzer")->info("stopping");
  Shutdown();
}

void AnalyzerApp::Shutdown() {
  ingest_listening_.store(false, std::memory_order_relaxed);  // /readyz: 503 from here
  // Agents resend whatever was not acknowledged, so open streams get a short grace.
  if (grpc_) grpc_->Shutdown(std::chrono::seconds{2});
  if (http_) http_->Stop();
  if (committer_) committer_->Stop();
  evidence_writer_.reset();                          // what is queued is written first
  if (store_ && feed_ && !topology_) SaveLearned();  // what the last second taught
  grpc_.reset();
  http_.reset();
  handler_.reset();
  committer_.reset();
  // The feed and snapshot stay: /metrics callbacks of a registry that outlives
  // the app read only the snapshot holder, never the store.
  store_.reset();
}

int AnalyzerApp::grpc_port() const {
  return grpc_ ? grpc_->port() : 0;
}
int AnalyzerApp::http_port() const {
  return http_ ? http_->endpoints().front().port : 0;
}

}  // namespace hostmesh::analyzer::app
