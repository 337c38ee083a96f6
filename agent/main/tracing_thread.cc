#include "agent/main/tracing_thread.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "agent/wiring/trace_plan.h"
#include "common/base/logging.h"
#include "common/base/thread_name.h"
#include "tracer/trace_engine.h"

namespace hostmesh::agent::app {
namespace {

std::shared_ptr<spdlog::logger> Log() {
  static const auto log = GetLogger("tracer");
  return log;
}

// Longest idle wait: bounds the wait arithmetic (MonoTime::max() when there
// are no targets) and costs one wake-up per period.
constexpr std::chrono::seconds kMaxIdleWait{10};

}  // namespace

// Forwards to the real socket layer until stop: then sends fail and receives
// come back empty, so RunTrace ends the trace under way at once.
class PathTracer::StoppableIo final : public tracer::TraceIo {
 public:
  explicit StoppableIo(std::unique_ptr<tracer::TraceIo> io) : io_(std::move(io)) {}
  void Stop() { stop_ = true; }
  bool stopped() const { return stop_; }

  std::string Open(const tracer::FiveTuple& tuple, const std::string& netdev) override {
    return stop_ ? "stopping" : io_->Open(tuple, netdev);
  }
  std::string Send(const tracer::FiveTuple& tuple, int ttl,
                   std::span<const std::uint8_t> payload) override {
    return stop_ ? "stopping" : io_->Send(tuple, ttl, payload);
  }
  bool Receive(MonoTime deadline, std::vector<std::uint8_t>& packet,
               MonoTime& received_at) override {
    return !stop_ && io_->Receive(deadline, packet, received_at);
  }
  void SleepUntil(MonoTime until) override {
    if (!stop_) io_->SleepUntil(until);
  }

 private:
  std::unique_ptr<tracer::TraceIo> io_;
  std::atomic<bool> stop_ = false;
};

PathTracer::PathTracer(tracer::ContinuousConfig config, std::unique_ptr<tracer::TraceIo> io,
                       const Clock& clock, ReportSink sink)
    : clock_(clock),
      sink_(std::move(sink)),
      io_(io ? std::make_unique<StoppableIo>(std::move(io)) : nullptr),
      tracer_(std::move(config), clock) {
  status_.unavailable = io_ ? 0 : 1;
}

PathTracer::~PathTracer() {
  Stop();
}

void PathTracer::Start() {
  if (!io_ || thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    status_.up = true;
  }
  thread_ = std::thread([this] {
    SetThreadName("hm-tracer");
    Run();
  });
}

void PathTracer::SetTargets(std::vector<tracer::TraceTarget> targets) {
  if (!io_) return;
  {
    std::lock_guard lock(mu_);
    pending_targets_ = std::move(targets);
  }
  cv_.notify_one();
}

void PathTracer::RetraceSoon(const tracer::FiveTuple& tuple) {
  if (!io_) return;
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (pending_retraces_.size() >= kMaxPendingRetraces) {
      // The thread is stuck in a trace while probes are being lost at scale:
      // those 5-tuples wait for their refresh instead.
      if (status_.retraces_dropped++ == 0) {
        Log()->warn("traceroute: more than {} lost probes wait for a retrace; dropping",
                    kMaxPendingRetraces);
      }
      return;
    }
    wake = pending_retraces_.empty();
    pending_retraces_.push_back(tuple);
  }
  // One wake-up per batch: the thread takes every pending one at once.
  if (wake) cv_.notify_one();
}

void PathTracer::RequestStop() {
  if (io_) io_->Stop();
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
}

void PathTracer::Stop() {
  RequestStop();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  status_.up = false;
}

TraceStatus PathTracer::Status() const {
  std::lock_guard lock(mu_);
  return status_;
}

void PathTracer::PublishLocked() {
  status_.counters = tracer_.counters();
  status_.targets = tracer_.targets();
}

void PathTracer::Run() {
  wiring::PathLengthHints hints;
  tracer::TraceRunner runner(*io_, clock_);
  std::vector<tracer::TraceResult> done;
  bool error_logged = false;
  for (;;) {
    std::optional<std::vector<tracer::TraceTarget>> targets;
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
      targets.swap(pending_targets_);
      retraces_.swap(pending_retraces_);
    }
    if (targets) tracer_.SetTargets(*targets);
    for (const tracer::FiveTuple& t : retraces_) tracer_.RetraceSoon(t);
    retraces_.clear();

    // Every trace the schedule and the budgets allow now starts now: one
    // wake-up serves them all.
    MonoTime wake = MonoTime::max();
    while (std::optional<tracer::TraceRequest> request = tracer_.NextTrace(wake)) {
      // ContinuousTracer knows the length of 5-tuples it traced; a port new to
      // the pool borrows its NIC pair's, so its swallowed last probe ends the trace.
      if (request->switch_hops == 0) request->switch_hops = hints.For(request->tuple);
      runner.Start(*request);
    }
    if (runner.active() > 0) {
      done.clear();
      runner.RunUntil(MonoTime::max(), done);
      if (io_->stopped()) return;  // a cut-short trace is neither a path nor an error
      for (const tracer::TraceResult& result : done) {
        hints.Learn(result);
        if (result.end == tracer::TraceEnd::kError && !error_logged) {
          // Usually a NIC that is down or a 5-tuple held without SO_REUSEADDR;
          // counted in hostmesh_agent_trace_errors_total from here on.
          Log()->warn("trace of {} failed: {}", result.tuple.ToString(), result.error);
          error_logged = true;
        }
        if (auto report = tracer_.OnTraceDone(result)) sink_(*report);
      }
      std::lock_guard lock(mu_);
      PublishLocked();
      continue;
    }

    std::unique_lock lock(mu_);
    PublishLocked();
    if (stop_) continue;
    const auto wait = std::clamp<std::chrono::nanoseconds>(wake - clock_.MonotonicNow(),
                                                           wiring::kTracerMinWait, kMaxIdleWait);
    cv_.wait_for(lock, wait, [this] {
      return stop_ || pending_targets_.has_value() || !pending_retraces_.empty();
    });
  }
}

void RegisterTraceMetrics(metrics::Registry& r, std::function<TraceStatus()> status) {
  using Counters = tracer::ContinuousCounters;
  const auto counter = [&](const char* name, const char* help, std::uint64_t Counters::*field) {
    r.AddCallbackCounter(name, help,
                         [status, field] { return static_cast<double>(status().counters.*field); });
  };
  counter("hostmesh_agent_trace_runs_total",
          "Traceroutes run, one 5-tuple each (failed sends included).", &Counters::traces_run);
  counter("hostmesh_agent_trace_errors_total",
          "Traceroutes that could not send (NIC down, 5-tuple not bindable).",
          &Counters::trace_errors);
  counter("hostmesh_agent_trace_probes_sent_total", "TTL-limited probes sent by the tracer.",
          &Counters::probes_sent);
  counter("hostmesh_agent_trace_hops_answered_total", "Hops that answered a traceroute probe.",
          &Counters::hops_answered);
  counter("hostmesh_agent_trace_hops_silent_total",
          "Hops that did not answer in time (rate-limited or slow: unknown, not a drop).",
          &Counters::silent_hops);
  counter("hostmesh_agent_trace_path_changes_total",
          "Traces whose path differed from the one known for their 5-tuple.",
          &Counters::path_changes);
  counter("hostmesh_agent_trace_reports_total", "Path reports handed to the uploader.",
          &Counters::reports);
  counter("hostmesh_agent_trace_loss_retraces_total",
          "Traces brought forward because a probe of their 5-tuple was lost.",
          &Counters::loss_retraces);
  r.AddCallbackCounter(
      "hostmesh_agent_trace_retraces_dropped_total",
      "Lost probes whose 5-tuple could not be queued for a retrace (tracer thread busy).",
      [status] { return static_cast<double>(status().retraces_dropped); });
  counter("hostmesh_agent_trace_budget_exhausted_total",
          "Due traces that had to wait for the global or per-switch probe budget.",
          &Counters::budget_exhausted);
  r.AddCallbackCounter(
      "hostmesh_agent_trace_unavailable_total",
      "1 when traceroute is enabled but could not start (raw ICMP socket: needs CAP_NET_RAW).",
      [status] { return static_cast<double>(status().unavailable); });
  r.AddCallbackGauge("hostmesh_agent_tracer_up", "1 while the tracer thread runs, else 0.",
                     [status] { return status().up ? 1.0 : 0.0; });
  r.AddCallbackGauge("hostmesh_agent_trace_targets",
                     "5-tuples of the current port pools the tracer keeps fresh.",
                     [status] { return static_cast<double>(status().targets); });
}

}  // namespace hostmesh::agent::app
