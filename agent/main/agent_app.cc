#include "agent/main/agent_app.h"

#include <malloc.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <utility>

#include "agent/core/prober.h"
#include "agent/main/agent_metrics.h"
#include "agent/main/debug_hooks.h"
#include "agent/main/recorder_metrics.h"
#include "agent/main/self_protection.h"
#include "agent/main/telemetry_metrics.h"
#include "agent/main/telemetry_thread.h"
#include "agent/main/tracing_thread.h"
#include "agent/main/upload_security.h"
#include "agent/main/verbs_plugin.h"
#include "agent/recorder/local_capture.h"
#include "agent/telemetry/telemetry_proto.h"
#include "agent/udp/udp_transport.h"
#include "agent/upload/wire_messages.h"
#include "agent/wiring/options_from_config.h"
#include "agent/wiring/trace_plan.h"
#include "common/base/logging.h"
#include "common/base/plain_syscalls.h"
#include "common/http/metrics_endpoint.h"
#include "common/http/server.h"
#include "common/http/server_config.h"
#include "tracer/kernel_trace_io.h"

namespace hostmesh::agent::app {
namespace {

std::shared_ptr<spdlog::logger> Log() {
  static const auto log = GetLogger("agent");
  return log;
}

std::string_view SourceName(TimestampSource source) {
  switch (source) {
    case TimestampSource::kUser:
      return "user";
    case TimestampSource::kKernel:
      return "kernel";
    case TimestampSource::kHardware:
      return "hardware";
    case TimestampSource::kUnspecified:
      break;
  }
  return "none";
}

std::uint64_t Random64(std::random_device& rd) {
  return (std::uint64_t{rd()} << 32) ^ rd();
}

}  // namespace

struct AgentApp::Core {
  Core(const wiring::CoreOptions& options, MonoTime start, std::uint64_t seed,
       ProbeTransport& transport, const Clock& clock, ProberOptions prober_options,
       Tracker::ResultSink sink)
      : scheduler(options.scheduler, start, seed),
        tracker(options.tracker, std::move(sink)),
        prober(scheduler, tracker, transport, clock, prober_options) {}
  Scheduler scheduler;
  Tracker tracker;
  Prober prober;
};

// For `auto`: libibverbs is asked (through the verbs module) only when sysfs
// shows an RDMA device of that name, so a host without one never loads it.
bool HasRdmaDevice(std::string_view name) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path("/sys/class/infiniband") / name, ec)) {
    return false;
  }
  std::string why;
  const VerbsPlugin* plugin = LoadVerbsPlugin(&why);
  if (plugin == nullptr) {
    Log()->warn("transport: RDMA device {} present but {}", name, why);
    return false;
  }
  return plugin->has_rdma_device(name);
}

BuiltTransport MakeTransport(const AgentConfig& config, const Clock& clock,
                             verbs::NicEventSink on_nic_event) {
  const wiring::TransportChoice choice = wiring::ChooseTransport(config, HasRdmaDevice);
  for (const std::string& reason : choice.reasons) Log()->info("transport: {}", reason);
  Log()->info(
      "transport: using {} for all {} NICs (one transport per process: the two cannot "
      "probe each other)",
      TransportName(choice.transport), config.nics.size());
  BuiltTransport built;
  built.kind = choice.transport;
  if (choice.transport == Transport::kVerbs) {
    std::string why;
    const VerbsPlugin* plugin = LoadVerbsPlugin(&why);
    if (plugin == nullptr) throw std::runtime_error(why);
    verbs::VerbsTransportOptions options = wiring::VerbsOptionsFrom(config);
    options.on_nic_event = std::move(on_nic_event);
    VerbsPluginTransport made = plugin->make_transport(clock, options);
    built.stats = std::move(made.stats);
    built.force_qp_error = std::move(made.force_qp_error);
    built.force_device_error = std::move(made.force_device_error);
    built.transport = std::move(made.transport);
  } else {
    auto transport = std::make_unique<udp::UdpTransport>(clock, wiring::UdpOptionsFrom(config));
    udp::UdpTransport* raw = transport.get();
    // Kernel stamps are on CLOCK_REALTIME already: no fit, no fit error.
    built.stats = [raw](NicId nic) {
      const auto& c = raw->counters(nic);
      TransportNicStats stats;
      stats.receive_errors = c.receive_errors;
      stats.error_queue = ErrorQueueStats{c.icmp_errors, c.other_errqueue};
      return stats;
    };
    built.transport = std::move(transport);
  }
  return built;
}

AgentApp::AgentApp(AgentConfig config, AgentAppOptions options, const Clock& clock,
                   metrics::Registry& registry)
    : config_(std::move(config)),
      options_(std::move(options)),
      clock_(clock),
      registry_(registry),
      recorder_(std::make_unique<recorder::FlightRecorder>(clock, config_.recorder.bytes.bytes)),
      log_tap_(std::make_unique<recorder::RecorderLogTap>(*recorder_)),
      error_queue_warners_(config_.nics.size(), ErrorQueueWarner(std::chrono::minutes{1})) {}

AgentApp::~AgentApp() {
  if (server_) server_->Stop();
  if (debug_server_) debug_server_->Stop();
  if (local_capture_.joinable()) local_capture_.join();
}

bool AgentApp::Start(std::string* error) {
  // The verbs module has its own copy of common/base and so of the log tap:
  // its logger is made here, with the agent's tap, before the module would
  // make one without it (spdlog's registry is shared, the first one stays).
  GetLogger("verbs");
  std::random_device rd;
  do {
    boot_id_ = Random64(rd);
  } while (boot_id_ == 0);
  if (!BuildTransport(error)) return false;
  OpenedNics opened;
  if (!OpenNics(&opened, error)) return false;
  std::unique_ptr<tracer::TraceIo> trace_io = OpenTraceIo();
  std::vector<std::string> names;
  for (const NicConfig& nic : config_.nics) names.push_back(nic.name);
  StartUploadSide(opened, std::move(trace_io), names, rd);
  if (!BuildCore(std::move(opened.source_ports), Random64(rd), error)) return false;
  distinct_ports_.assign(config_.nics.size() * config_.nics.size(), 0);
  if (config_.protect.enabled) {
    protection_ = std::make_unique<SelfProtection>(
        config_.protect, core_->scheduler, clock_, registry_,
        [up = uploader_.get()](const v1::LoadShedding& s) { up->SetLoadShedding(s); });
  }
  Publish(true);
  PrepareSourcePorts();
  HandTraceTargets();
  if (options_.serve_metrics && !ServeMetrics(names, error)) return false;
  uploader_->Start();
  if (tracer_) tracer_->Start();
  if (config_.telemetry.enabled) StartTelemetry();
  Log()->info("agent {} boot {:016x}: probing {} NICs every {} ms, analyzer {}", config_.agent_id,
              boot_id_, config_.nics.size(),
              std::chrono::duration_cast<std::chrono::milliseconds>(config_.probe.interval).count(),
              config_.analyzer.address.ToString());
  return true;
}

bool AgentApp::BuildTransport(std::string* error) {
  try {
    built_ = options_.make_transport
                 ? options_.make_transport(config_, clock_)
                 : MakeTransport(config_, clock_,
                                 [this](const verbs::NicEventNote& n) { OnNicEvent(n); });
  } catch (const std::exception& e) {
    *error = std::string("cannot create the transport: ") + e.what();
    return false;
  }
  const auto problems = wiring::CheckWiring(config_, built_.kind);
  if (!problems.empty()) {
    *error = problems.front();
    start_exit_code_ = kExitConfig;  // the file must change: no restart loop
    return false;
  }
  return true;
}

// A NIC that does not open stays in the mesh: its own probes are send
// failures and the probes to it time out, which is how the analyzer learns
// that a NIC is broken.
bool AgentApp::OpenNics(OpenedNics* opened, std::string* error) {
  std::size_t ok = 0;
  for (NicId nic = 0; nic < config_.nics.size(); ++nic) {
    const OpenResult result = built_.transport->OpenNic(nic);
    opened->capabilities.push_back(result.capabilities);
    opened->source_ports.push_back(result.source_ports);
    rotations_.push_back(result.rotation);
    opened->sources.push_back(result.ok ? result.capabilities.recv_timestamps
                                        : TimestampSource::kUnspecified);
    if (result.ok) {
      ++ok;
      Log()->info("NIC {} open: {} transport, timestamps send {} receive {}, source ports by {}",
                  config_.nics[nic].name, TransportName(built_.kind),
                  SourceName(result.capabilities.send_timestamps),
                  SourceName(result.capabilities.recv_timestamps),
                  SourcePortRotationName(result.rotation));
    } else {
      Log()->warn("NIC {} did not open (its probes will time out): {}", config_.nics[nic].name,
                  result.error);
    }
  }
  if (ok == 0) {
    *error = "no NIC could be opened";
    return false;
  }
  return true;
}

// Without the raw socket the agent still probes: paths are a bonus, probes the job.
std::unique_ptr<tracer::TraceIo> AgentApp::OpenTraceIo() {
  if (!config_.traceroute.enabled) return nullptr;
  std::string why;
  std::unique_ptr<tracer::TraceIo> trace_io =
      options_.make_trace_io
          ? options_.make_trace_io(clock_, why)
          : tracer::KernelTraceIo::Create(clock_, config_.probe.traffic_class, why);
  if (!trace_io) Log()->warn("traceroute off, probing without path reports: {}", why);
  return trace_io;
}

// The uploader with this boot's Hello, the agent's metrics, and the tracer
// (traceroute.enabled) whose reports go to the uploader.
void AgentApp::StartUploadSide(const OpenedNics& opened, std::unique_ptr<tracer::TraceIo> trace_io,
                               const std::vector<std::string>& names, std::random_device& rd) {
  upload::HelloInputs hello;
  hello.traceroute = trace_io != nullptr;
  hello.boot_id = boot_id_;
  hello.transport = built_.kind;
  hello.capabilities = opened.capabilities;
  hello.agent_version = options_.version;
  hello.start_time_ns = clock_.RealtimeNow().time_since_epoch().count();
  upload::UploaderOptions uploader_options = wiring::UploaderOptionsFrom(config_);
  uploader_options.jitter_seed = Random64(rd) | 1;
  recorder::CapturePolicyOptions policy;
  policy.per_minute = policy.burst = config_.recorder.captures_per_minute;
  capture_desk_ = std::make_unique<recorder::CaptureDesk>(
      *recorder_, policy, recorder::ExtractLimits{}, clock_.MonotonicNow());
  recorder::CaptureDesk* desk = capture_desk_.get();
  uploader_options.answer_capture = [desk](const v1::CaptureRequest& request, MonoTime now) {
    return desk->Answer(request, now);
  };
  uploader_ = std::make_unique<upload::Uploader>(
      clock_, uploader_options, upload::BuildHello(config_, hello), options_.make_channel);

  RegisterUploadSecurity(registry_, config_.analyzer, config_.metrics.server);
  RegisterRecorderMetrics(registry_, *recorder_, *capture_desk_, local_captures_,
                          local_capture_failures_);

  upload::Uploader* uploader = uploader_.get();
  metrics_ =
      std::make_unique<AgentMetrics>(registry_, names, [uploader] { return uploader->Counters(); });
  metrics_->SetTimestampSources(opened.sources);
  metrics_->SetSourcePortRotations(rotations_);
  if (config_.traceroute.enabled) {
    tracer_ = std::make_unique<PathTracer>(
        wiring::ContinuousConfigFrom(config_, static_cast<std::uint32_t>(rd()) | 1U),
        std::move(trace_io), clock_,
        [uploader, rec = recorder_.get()](const tracer::PathReport& r) {
          rec->RecordPath(r);
          uploader->Append(upload::ToProto(r));
        });
  }
  PathTracer* path_tracer = tracer_.get();
  RegisterTraceMetrics(registry_, [path_tracer] {
    return path_tracer != nullptr ? path_tracer->Status() : TraceStatus{};
  });
}

bool AgentApp::BuildCore(std::vector<std::vector<std::uint16_t>> source_ports, std::uint64_t seed,
                         std::string* error) {
  try {
    ProberOptions prober;
    prober.payload_bytes = config_.probe.payload_bytes;
    prober.boot_id = boot_id_;
    wiring::CoreOptions core_options = wiring::CoreOptionsFrom(config_);
    core_options.scheduler.nic_allowed_ports = std::move(source_ports);
    core_ = std::make_unique<Core>(core_options, clock_.MonotonicNow(), seed, *built_.transport,
                                   clock_, prober, [this](const ProbeResult& r) { OnResult(r); });
  } catch (const std::invalid_argument& e) {
    *error = e.what();
    return false;
  }
  return true;
}

bool AgentApp::ServeMetrics(const std::vector<std::string>& names, std::string* error) {
  http::Router router;
  // A scrape collects every series (about five times the text's 56 KB with
  // 8 NICs) in the server thread's heap arena and frees it: given back at
  // once, not kept until the next periodic trim (it was most of the agent's
  // private memory growth between two scrapes).
  http::MountMetrics(router, registry_, "/metrics", [] { ::malloc_trim(0); });
  if (config_.metrics.debug_hooks && !ServeDebugHooks(names, error)) return false;
  http::ServerOptions server;
  server.listen_addresses = {config_.metrics.listen.ToString()};
  http::ApplyHttpServerConfig(config_.metrics.server, server);
  // One scrape every few seconds: a second worker thread would only idle
  // (stalled connections need none).
  server.workers = 1;
  // Its counters' series appear at their first event: the agent's series
  // budget has room for a healthy server's, not for every reason's zero.
  http_stats_ =
      std::make_unique<http::ServerStats>(registry_, http::ServerStats::Series::kOnFirstEvent);
  server.stats = http_stats_.get();
  // Ready once the probe loop runs (Run), until it stops sending.
  server.ready = [this]() -> std::string {
    return probing_.load(std::memory_order_relaxed) ? "" : "probing has not started";
  };
  server.log = [](std::string_view line) { Log()->warn("metrics server: {}", line); };
  server.log_info = [](std::string_view line) { Log()->info("metrics server: {}", line); };
  std::string why;
  server_ = http::Server::Start(server, std::move(router), &why);
  if (!server_) {
    *error = "metrics: " + why;
    return false;
  }
  if (!config_.metrics.server.bearer_token_file.empty() && !config_.metrics.server.tls()) {
    Log()->warn(
        "metrics.bearer_token_file without metrics.tls: the token crosses the network in "
        "clear text");
  }
  Log()->info("metrics on {}://{}/metrics{}", config_.metrics.server.tls() ? "https" : "http",
              server_->endpoints().front().ToString(),
              config_.metrics.server.bearer_token_file.empty() ? "" : " (bearer token)");
  return true;
}

// The test-only hooks on a server of their own, on a loopback address (the
// config refuses another): they are unauthenticated.
bool AgentApp::ServeDebugHooks(const std::vector<std::string>& names, std::string* error) {
  if (!built_.force_qp_error) {
    Log()->warn("metrics.debug_hooks: the {} transport has no hooks; none served",
                TransportName(built_.kind));
    return true;
  }
  debug_hooks_ = std::make_unique<DebugHooks>(names);
  http::Router router;
  debug_hooks_->Mount(router);
  http::ServerOptions server;
  server.listen_addresses = {config_.metrics.debug_hooks_listen.ToString()};
  server.workers = 1;
  server.max_connections = 4;  // one test at a time, all from loopback
  server.max_connections_per_peer = 4;
  server.log = [](std::string_view line) { Log()->warn("debug hooks server: {}", line); };
  std::string why;
  debug_server_ = http::Server::Start(server, std::move(router), &why);
  if (!debug_server_) {
    *error = "metrics.debug_hooks: " + why;
    return false;
  }
  Log()->warn(
      "metrics.debug_hooks is on: POST http://{}/debug/qp-error and /debug/device-error break "
      "QPs and reopen devices (tests only)",
      debug_server_->endpoints().front().ToString());
  return true;
}

void AgentApp::StartTelemetry() {
  const TelemetryConfig& cfg = config_.telemetry;
  std::vector<telemetry::TelemetryNic> nics;
  std::vector<TelemetryNicLabels> labels;
  for (const NicConfig& nic : config_.nics) {
    nics.push_back({nic.name, nic.netdev, nic.rdma_device, nic.rdma_port});
    labels.push_back({nic.name, nic.netdev, nic.rdma_device, nic.rdma_port});
  }
  std::unique_ptr<telemetry::EthtoolStatsSource> ethtool;
  if (cfg.ethtool) ethtool = std::make_unique<telemetry::IoctlEthtoolStats>();
  telemetry::CollectorOptions options;
  options.period = cfg.period;
  options.exclude = telemetry::TelemetryExclude(cfg.exclude);
  auto collector = std::make_unique<telemetry::TelemetryCollector>(
      cfg.sysfs_root, std::move(nics), ethtool.get(), std::move(options));
  telemetry_board_ = std::make_unique<TelemetryBoard>();
  RegisterTelemetryMetrics(registry_, std::move(labels), cfg.pause_priorities, *telemetry_board_);
  // Every read goes to the flight recorder; to the analyzer with telemetry.upload.
  upload::Uploader* uploader = cfg.upload ? uploader_.get() : nullptr;
  TelemetryThread::DeltaSink sink = [uploader, rec = recorder_.get()](
                                        std::uint32_t nic, const telemetry::NicDelta& delta) {
    const v1::NicTelemetry proto = telemetry::ToProto(nic, delta);
    rec->RecordCounters(proto);
    if (uploader != nullptr) uploader->Append(proto);
  };
  telemetry_ =
      std::make_unique<TelemetryThread>(clock_, cfg.period, std::move(ethtool),
                                        std::move(collector), *telemetry_board_, std::move(sink));
  telemetry_->Start();
  std::string excluded;
  for (const telemetry::ExcludeRule& rule : cfg.exclude) {
    excluded += (excluded.empty() ? "; never reading " : ", ") + telemetry::ToString(rule);
  }
  Log()->info("telemetry: reading {} NICs every {} s from {}{}{}{}", config_.nics.size(),
              std::chrono::duration<double>(cfg.period).count(), cfg.sysfs_root,
              cfg.ethtool ? " and ethtool" : "", cfg.upload ? ", uploading deltas" : "", excluded);
}

void AgentApp::RunDebugHooks() {
  if (!debug_hooks_) return;
  for (const QpErrorRequest& req : debug_hooks_->Take()) {
    if (req.kind == QpErrorRequest::Kind::kDeviceError) {
      const std::string error = built_.force_device_error(req.nic);
      Log()->warn("debug hook: NIC {}'s device {}", config_.nics[req.nic].name,
                  error.empty() ? "taken as failed: it will be reopened" : "untouched: " + error);
      continue;
    }
    const std::string error = built_.force_qp_error(req.nic, req.qp);
    if (error.empty()) {
      Log()->warn("debug hook: QP {} of NIC {} forced into the error state", req.qp,
                  config_.nics[req.nic].name);
    } else {
      Log()->warn("debug hook: cannot force QP {} of NIC {} into error: {}", req.qp,
                  config_.nics[req.nic].name, error);
    }
  }
}

void AgentApp::OnNicReopened(NicId nic) {
  const OpenResult result = built_.transport->OpenNic(nic);
  if (!result.ok) return;
  bool changed = false;
  try {
    changed = core_->scheduler.SetAllowedPorts(nic, result.source_ports, clock_.MonotonicNow());
  } catch (const std::invalid_argument& e) {
    Log()->warn("NIC {} reopened, but its new source ports are unusable: {}",
                config_.nics[nic].name, e.what());
    return;
  }
  rotations_[nic] = result.rotation;
  metrics_->SetSourcePortRotations(rotations_);
  prepared_generations_.clear();  // a reopened NIC builds its handles anew
  if (changed) {
    trace_feed_.Reset();  // the tracer gets the new ports at once
    Log()->warn("NIC {} reopened with {} new source ports: its port pool starts over on them",
                config_.nics[nic].name, result.source_ports.size());
  }
}

void AgentApp::OnNicEvent(const verbs::NicEventNote& note) {
  recorder::FlightEntry e;
  switch (note.kind) {
    case verbs::NicEventNote::Kind::kAsyncEvent:
      e.kind = recorder::FlightKind::kAsyncEvent;
      break;
    case verbs::NicEventNote::Kind::kQpRecovery:
      e.kind = recorder::FlightKind::kQpRecovery;
      break;
    case verbs::NicEventNote::Kind::kReopen:
      e.kind = recorder::FlightKind::kTransportReopen;
      break;
    case verbs::NicEventNote::Kind::kClockFit:
      e.kind = recorder::FlightKind::kClockFit;
      break;
  }
  e.nic = static_cast<std::uint8_t>(std::min<std::uint32_t>(note.nic, 255));
  e.value = static_cast<std::int32_t>(note.value);
  e.value_ns = note.value_ns;
  e.flags = note.failed ? recorder::kAttemptFailed : 0;
  e.text = note.text;
  recorder_->Record(e);
}

void AgentApp::StartLocalCapture(int capture_fd) {
  signalfd_siginfo info{};
  while (::read(capture_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
  }
  if (local_capture_.joinable()) local_capture_.join();  // one at a time; they take ms
  const WallTime now = clock_.RealtimeNow();
  const std::int64_t to = now.time_since_epoch().count() + 1;
  const std::int64_t from = to - 1 - config_.recorder.window.count();
  local_capture_ = std::thread([this, from, to, now] {
    const v1::FlightRecord record = recorder_->Extract(0, from, to);
    std::string error;
    const auto path = recorder::WriteLocalCapture(record, config_.recorder.state_dir, now,
                                                  config_.recorder.keep_files, &error);
    if (!path) {
      local_capture_failures_.fetch_add(1, std::memory_order_relaxed);
      Log()->warn("flight recorder: local capture failed: {}", error);
      return;
    }
    local_captures_.fetch_add(1, std::memory_order_relaxed);
    Log()->info("flight recorder: {} events of the last {} s written to {}{}", record.events_size(),
                std::chrono::duration_cast<std::chrono::seconds>(config_.recorder.window).count(),
                path->string(), record.truncated() ? " (truncated to the record's cap)" : "");
  });
}

void AgentApp::OnResult(const ProbeResult& result) {
  metrics_->ObserveResult(result);
  results_.push_back(result);
  if (tracer_ && tracer_->up()) {
    if (const auto tuple = trace_feed_.RetraceFor(result)) tracer_->RetraceSoon(*tuple);
  }
}

void AgentApp::UploadResults() {
  if (results_.empty()) return;
  // A loop turn's results at once: one lock each for the recorder and the uploader.
  recorder_->RecordProbes(results_);
  uploader_->AppendResults(results_);
  results_.clear();
}

void AgentApp::PrepareSourcePorts() {
  const std::size_t n = config_.nics.size();
  const std::uint64_t changes = core_->scheduler.pool_changes();
  if (prepared_generations_.size() == n && changes == prepared_changes_) return;
  prepared_changes_ = changes;
  if (prepared_generations_.size() != n) prepared_generations_.assign(n, ~std::uint64_t{0});
  for (NicId nic = 0; nic < n; ++nic) {
    const PortPool& pool = core_->scheduler.pool(nic);
    if (pool.generation() == prepared_generations_[nic]) continue;
    prepared_generations_[nic] = pool.generation();
    std::vector<std::uint16_t> ports(pool.ports().begin(), pool.ports().end());
    const std::vector<std::uint16_t> next = pool.NextRotationPorts();
    ports.insert(ports.end(), next.begin(), next.end());
    built_.transport->PrepareSourcePorts(nic, ports);
  }
}

bool AgentApp::HandTraceTargets() {
  if (!tracer_ || !tracer_->up()) return false;
  const bool first = !trace_feed_.handed_any();
  std::optional<std::vector<tracer::TraceTarget>> targets =
      trace_feed_.TargetsIfRotated(core_->scheduler);
  if (!targets) return false;
  if (first) {
    bool over = false;
    const std::string load = wiring::DescribeTraceLoad(config_, targets->size(), &over);
    over ? Log()->warn("traceroute: {}", load) : Log()->info("traceroute: {}", load);
  }
  tracer_->SetTargets(std::move(*targets));
  return true;
}

// ICMP errors for probes sent and other error-queue messages: a degraded
// mode, warned of at most once a minute per NIC (error_queue_warner.h).
void AgentApp::WarnOfErrorQueue(NicId nic, const std::optional<ErrorQueueStats>& stats,
                                MonoTime now) {
  if (!stats) return;
  ErrorQueueWarner& warner = error_queue_warners_[nic];
  const bool before = warner.warned_before();
  const std::optional<ErrorQueueStats> fresh = warner.Due(*stats, now);
  if (!fresh) return;
  Log()->warn(
      "NIC {}: {} ICMP errors for probes sent and {} other error-queue messages since {} (a "
      "peer's agent not listening, or a route gone; hostmesh_agent_error_queue_messages_total)",
      config_.nics[nic].name, fresh->icmp_errors, fresh->other,
      before ? "the last warning" : "start");
}

void AgentApp::Publish(bool coverage) {
  const std::size_t n = config_.nics.size();
  const MonoTime now = clock_.MonotonicNow();
  // Self-protection samples on the publish beat, when its own period is due.
  if (protection_) protection_->Tick(now);
  LoopSnapshot s;
  s.pairs.reserve(n * n);
  for (NicId a = 0; a < n; ++a) {
    for (NicId b = 0; b < n; ++b) s.pairs.push_back(core_->tracker.counters(a, b));
  }
  for (NicId nic = 0; nic < n; ++nic) {
    s.prober.push_back(core_->prober.nic_counters(nic));
    const TransportNicStats stats = built_.stats ? built_.stats(nic) : TransportNicStats{};
    s.receive_errors.push_back(stats.receive_errors);
    s.clock_fit_error_seconds.push_back(stats.clock_fit_error_seconds);
    s.rnic_health.push_back(stats.rnic_health);
    s.error_queue.push_back(stats.error_queue);
    WarnOfErrorQueue(nic, stats.error_queue, now);
    const PortPool& pool = core_->scheduler.pool(nic);
    if (coverage) {
      for (NicId dst = 0; dst < n; ++dst) {
        distinct_ports_[nic * n + dst] = dst == nic ? 0 : pool.DistinctPortsUsed(dst, now);
      }
    }
  }
  s.distinct_ports = distinct_ports_;
  s.pending = core_->tracker.pending();
  metrics_->Publish(std::move(s));
}

bool AgentApp::Run(int stop_fd, int capture_fd) {
  const int ready_fd = built_.transport->ReadyFd();
  MonoTime next_publish = clock_.MonotonicNow() + options_.publish_period;
  MonoTime next_coverage = clock_.MonotonicNow() + options_.coverage_period;
  MonoTime next_trim = clock_.MonotonicNow() + options_.heap_trim_period;
  MonoTime drain_until = MonoTime::max();
  bool events_ready = true;  // what the last wait saw of ready_fd
  probing_.store(true, std::memory_order_relaxed);
  for (;;) {
    MonoTime wake = core_->prober.RunOnce(events_ready);
    UploadResults();
    for (NicId nic : built_.transport->TakeReopened()) OnNicReopened(nic);
    PrepareSourcePorts();
    const bool handed = HandTraceTargets();
    RunDebugHooks();
    MonoTime now = clock_.MonotonicNow();
    if (handed) next_trim = std::min(next_trim, now + options_.trim_after_rotation);
    if (options_.heartbeat) options_.heartbeat(now);
    if (now >= next_publish) {
      const bool coverage = now >= next_coverage;
      Publish(coverage);
      next_publish = now + options_.publish_period;
      if (coverage) next_coverage = now + options_.coverage_period;
      if (now >= next_trim) {
        ::malloc_trim(0);
        next_trim = now + options_.heap_trim_period;
      }
    }
    if (!core_->prober.sending() && (core_->tracker.pending() == 0 || now >= drain_until)) break;

    // A due publish rides on the next wake-up the probes need anyway; it
    // gets a wake-up of its own only once it is a whole period late.
    wake = std::min({wake, next_publish + options_.publish_period, drain_until});
    pollfd fds[3];
    nfds_t count = 0;
    if (ready_fd >= 0) fds[count++] = {ready_fd, POLLIN, 0};
    const nfds_t capture_at = count;
    if (capture_fd >= 0) fds[count++] = {capture_fd, POLLIN, 0};
    const bool watch_stop = core_->prober.sending();
    if (watch_stop) fds[count++] = {stop_fd, POLLIN, 0};
    const auto wait = std::max(wake - now, std::chrono::nanoseconds::zero());
    const int n = PlainPpoll(fds, count, wait);
    if (n < 0 && errno != EINTR) Log()->warn("ppoll: {}", std::strerror(errno));
    events_ready = ready_fd < 0 || n != 0;
    const bool capture = capture_fd >= 0 && n > 0 && (fds[capture_at].revents & POLLIN) != 0;
    if (capture) StartLocalCapture(capture_fd);
    if (watch_stop && n > 0 && (fds[count - 1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      now = clock_.MonotonicNow();
      core_->prober.StopSending();
      probing_.store(false, std::memory_order_relaxed);  // /readyz: 503 while draining
      if (tracer_) tracer_->RequestStop();
      // The last probe sent may wait one timeout; a little more for its TX stamp.
      drain_until = now + config_.probe.timeout + std::chrono::milliseconds{100};
      Log()->info("stopping: no new probes, waiting up to {} ms for {} outstanding",
                  std::chrono::duration_cast<std::chrono::milliseconds>(drain_until - now).count(),
                  core_->tracker.pending());
    }
  }
  return FinishRun();
}

bool AgentApp::FinishRun() {
  Publish(true);
  if (tracer_) tracer_->Stop();  // its last report goes into the flush below
  if (telemetry_) telemetry_->Stop();

  const PairCounters totals = core_->tracker.Totals();
  Log()->info("probes: {} sent, {} received, {} timed out, {} late", totals.sent, totals.received,
              totals.timed_out, totals.late);
  const bool flushed = uploader_->Shutdown(clock_.MonotonicNow() + options_.upload_flush_timeout);
  const upload::UploadCounters up = uploader_->Counters();
  if (flushed) {
    Log()->info("upload: all {} batches acknowledged", up.batches_acknowledged);
  } else {
    Log()->warn("upload: {} batches ({} bytes) not acknowledged by the analyzer at exit",
                up.queue_depth, up.bytes_buffered);
  }
  if (server_) server_->Stop();
  if (debug_server_) debug_server_->Stop();
  if (local_capture_.joinable()) local_capture_.join();
  return flushed;
}

std::uint16_t AgentApp::metrics_port() const {
  return server_ && !server_->endpoints().empty() ? server_->endpoints().front().port : 0;
}

std::uint16_t AgentApp::debug_hooks_port() const {
  return debug_server_ && !debug_server_->endpoints().empty()
             ? debug_server_->endpoints().front().port
             : 0;
}

}  // namespace hostmesh::agent::app
