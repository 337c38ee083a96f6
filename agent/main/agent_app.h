#pragma once

// The agent process minus flag parsing: builds the transport, core, uploader
// and /metrics from an AgentConfig, runs the probe loop on the calling thread
// until a stop fd becomes readable, then drains and flushes.
//
// Shutdown: on stop, no new probe is sent; the loop keeps receiving until
// every outstanding probe is decided (at most one timeout), then the
// uploader gets `upload_flush_timeout` to have everything acknowledged.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "agent/config/agent_config.h"
#include "agent/core/probe_transport.h"
#include "agent/main/error_queue_warner.h"
#include "agent/main/transport_stats.h"
#include "agent/recorder/capture_desk.h"
#include "agent/recorder/flight_recorder.h"
#include "agent/recorder/recorder_log_tap.h"
#include "agent/upload/uploader.h"
#include "agent/verbs/nic_event_note.h"
#include "agent/wiring/trace_feed.h"
#include "common/base/clock.h"
#include "common/base/exit_codes.h"
#include "common/metrics/registry.h"

namespace hostmesh::http {
class Server;
class ServerStats;
}  // namespace hostmesh::http
namespace hostmesh::tracer {
class TraceIo;
}

namespace hostmesh::agent::app {

class AgentMetrics;
class DebugHooks;
class PathTracer;
class SelfProtection;
class TelemetryBoard;
class TelemetryThread;

// A built transport with the hook that reads its per-NIC stats.
struct BuiltTransport {
  std::unique_ptr<ProbeTransport> transport;
  Transport kind = Transport::kUdp;
  std::function<TransportNicStats(NicId)> stats;
  // Verbs only: forces a QP of a NIC into the error state (debug hooks);
  // returns an error message, empty on success.
  std::function<std::string(NicId, std::uint32_t)> force_qp_error;
  // Verbs only: takes a NIC's device as failed, so it is reopened (debug hooks).
  std::function<std::string(NicId)> force_device_error;
};

struct AgentAppOptions {
  std::string version;
  // How often the loop copies the core's counters for the scrape thread: at
  // the first wake-up after a period has passed, at the latest two periods
  // after the last copy (a wake-up costs more than the copy).
  // A second: scrapes come every 15 s or more, and each copy costs about
  // 25,000 instructions (64 NIC pairs' counters, 16 histograms flushed).
  std::chrono::nanoseconds publish_period = std::chrono::seconds{1};
  // DistinctPortsUsed walks the pool history (an hour of generations per NIC
  // pair): refreshed less often. The gauge counts ports over an hour, and a
  // rotation brings new ones once a minute.
  std::chrono::nanoseconds coverage_period = std::chrono::seconds{5};
  // How often freed heap pages go back to the kernel (malloc_trim), at a
  // publish: every port rotation frees and reallocates the tracer's and the
  // pools' entries, and glibc keeps the freed pages of each thread's arena.
  std::chrono::nanoseconds heap_trim_period = std::chrono::seconds{30};
  // A rotation's 5-tuples (one vector of every target, about 60 KB with 8
  // NICs) are freed by the tracer thread once it has taken them: the heap is
  // trimmed this long after a hand-over, not up to heap_trim_period later.
  std::chrono::nanoseconds trim_after_rotation = std::chrono::seconds{1};
  std::chrono::nanoseconds upload_flush_timeout = std::chrono::seconds{5};
  // Seams for tests; empty means the real thing.
  std::function<BuiltTransport(const AgentConfig&, const Clock&)> make_transport;
  upload::Uploader::ChannelFactory make_channel;
  // The tracer's sockets (traceroute.enabled); null with `error` set when they
  // cannot open. Empty: tracer::KernelTraceIo (raw ICMP, needs CAP_NET_RAW).
  std::function<std::unique_ptr<tracer::TraceIo>(const Clock&, std::string& error)> make_trace_io;
  bool serve_metrics = true;
  // Called at every turn of the main loop: the systemd watchdog's proof of life.
  std::function<void(MonoTime)> heartbeat;
};

class AgentApp {
 public:
  AgentApp(AgentConfig config, AgentAppOptions options, const Clock& clock,
           metrics::Registry& registry);
  ~AgentApp();
  AgentApp(const AgentApp&) = delete;
  AgentApp& operator=(const AgentApp&) = delete;

  // Opens the NICs, starts the uploader (which connects in the background:
  // an unreachable analyzer is not an error) and the metrics server. False
  // with the reason when the agent cannot run at all.
  bool Start(std::string* error);
  // After Start failed, the process's exit code (common/base/exit_codes.h):
  // kExitConfig when the config does not suit the transport chosen at start
  // (a NIC without the netdev or RDMA device it needs), else kExitFailure.
  int start_exit_code() const { return start_exit_code_; }

  // Probes until `stop_fd` is readable, then drains and flushes. Returns
  // true when every result was acknowledged by the analyzer. A readable
  // `capture_fd` (a signalfd of SIGUSR2; -1: none) writes a local capture of
  // the flight recorder (recorder.window back) under recorder.state_dir.
  bool Run(int stop_fd, int capture_fd = -1);

  // The flight recorder (for tests: what the sources recorded).
  const recorder::FlightRecorder& flight_recorder() const { return *recorder_; }

  // The bound metrics port (for listen port 0), 0 when not serving.
  std::uint16_t metrics_port() const;
  // The debug hooks' server port (0 when none is served).
  std::uint16_t debug_hooks_port() const;
  std::uint64_t boot_id() const { return boot_id_; }

 private:
  struct Core;
  // What opening the NICs found, per NIC.
  struct OpenedNics {
    std::vector<NicCapabilities> capabilities;
    std::vector<TimestampSource> sources;  // kUnspecified for a NIC that did not open
    std::vector<std::vector<std::uint16_t>> source_ports;
  };
  // The phases of Start, in order.
  bool BuildTransport(std::string* error);
  bool OpenNics(OpenedNics* opened, std::string* error);
  std::unique_ptr<tracer::TraceIo> OpenTraceIo();
  void StartUploadSide(const OpenedNics& opened, std::unique_ptr<tracer::TraceIo> trace_io,
                       const std::vector<std::string>& names, std::random_device& rd);
  bool BuildCore(std::vector<std::vector<std::uint16_t>> source_ports, std::uint64_t seed,
                 std::string* error);
  bool ServeMetrics(const std::vector<std::string>& names, std::string* error);
  bool ServeDebugHooks(const std::vector<std::string>& names, std::string* error);
  void Publish(bool coverage);
  // After Run's loop: the last publish, the threads stopped, the upload flushed.
  bool FinishRun();
  void WarnOfErrorQueue(NicId nic, const std::optional<ErrorQueueStats>& stats, MonoTime now);
  void OnResult(const ProbeResult& result);
  // The results of the last loop turn to the uploader, under one lock.
  void UploadResults();
  // Hands the tracer the pools' 5-tuples when a pool has rotated since last
  // time; whether it did.
  bool HandTraceTargets();
  // Tells the transport each pool's ports and the next rotation's when a pool
  // has rotated, so it builds what they need ahead (verbs address handles).
  void PrepareSourcePorts();
  // The telemetry thread and its /metrics (telemetry.enabled).
  void StartTelemetry();
  // Acts on the debug hooks' queued requests (metrics.debug_hooks).
  void RunDebugHooks();
  // The transport reopened `nic` (TakeReopened): its source ports may be new.
  void OnNicReopened(NicId nic);
  // The verbs transport's NIC trouble into the flight recorder.
  void OnNicEvent(const verbs::NicEventNote& note);
  // SIGUSR2: drains `capture_fd` and writes a local capture on a thread of
  // its own (a file of up to a ring's worth never stalls the probe loop).
  void StartLocalCapture(int capture_fd);

  AgentConfig config_;
  AgentAppOptions options_;
  const Clock& clock_;
  metrics::Registry& registry_;
  std::uint64_t boot_id_ = 0;

  // First: every thread below records into it, so it goes last.
  std::unique_ptr<recorder::FlightRecorder> recorder_;
  std::unique_ptr<recorder::RecorderLogTap> log_tap_;
  std::unique_ptr<recorder::CaptureDesk> capture_desk_;  // the uploader's thread uses it
  std::thread local_capture_;
  std::atomic<std::uint64_t> local_captures_{0};
  std::atomic<std::uint64_t> local_capture_failures_{0};

  BuiltTransport built_;
  std::unique_ptr<upload::Uploader> uploader_;
  // After uploader_: its reports go there, so it stops first.
  std::unique_ptr<PathTracer> tracer_;
  // After uploader_ too: its deltas go there. The board outlives the thread.
  std::unique_ptr<TelemetryBoard> telemetry_board_;
  std::unique_ptr<TelemetryThread> telemetry_;
  wiring::TraceFeed trace_feed_{config_};  // after config_, which it reads
  std::vector<SourcePortRotation> rotations_;
  std::vector<std::uint64_t> prepared_generations_;
  std::uint64_t prepared_changes_ = 0;  // Scheduler::pool_changes() when last compared
  std::unique_ptr<AgentMetrics> metrics_;
  std::unique_ptr<Core> core_;
  std::unique_ptr<SelfProtection> protection_;     // after core_: it sets the scheduler's rate
  std::unique_ptr<DebugHooks> debug_hooks_;        // before server_: its handlers point here
  std::unique_ptr<http::ServerStats> http_stats_;  // before server_, which counts there
  std::unique_ptr<http::Server> server_;
  std::unique_ptr<http::Server> debug_server_;  // after debug_hooks_: its handlers point there
  // Read by /readyz on the server's thread: the probe loop is running.
  std::atomic<bool> probing_{false};
  std::vector<std::uint64_t> distinct_ports_;
  std::vector<ErrorQueueWarner> error_queue_warners_;  // per NIC
  // Results of the loop turn under way (OnResult), uploaded together after it.
  std::vector<ProbeResult> results_;
  int start_exit_code_ = kExitFailure;
};

// The real transports: UDP or verbs per ChooseTransport with HasRdmaDevice.
// `on_nic_event`: the verbs transport's NIC trouble (flight recorder).
BuiltTransport MakeTransport(const AgentConfig& config, const Clock& clock,
                             verbs::NicEventSink on_nic_event = {});

}  // namespace hostmesh::agent::app
