#pragma once

// The agent's tracer thread: traces every probe 5-tuple of the current pools
// (tracer::ContinuousTracer decides what and when, within the budget), hands
// each path report to a sink (the uploader) and exports its counters.
//
// Threads: the probe loop calls SetTargets when a pool rotates; it only swaps
// a vector under a short lock and wakes the tracer, never waits for a trace.
// Everything else runs on the tracer thread, which alone touches the
// ContinuousTracer and the sockets. Status() is for the scrape thread.
//
// Stop: RequestStop makes the socket layer refuse further sends and stop
// waiting for replies, so the trace under way ends within one receive poll,
// not after max_ttl probe timeouts.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/base/clock.h"
#include "common/metrics/registry.h"
#include "tracer/continuous_tracer.h"
#include "tracer/trace_io.h"

namespace hostmesh::agent::app {

struct TraceStatus {
  bool up = false;                // the raw ICMP socket is open and the thread runs
  std::uint64_t unavailable = 0;  // 1 when the tracer could not start (no CAP_NET_RAW)
  std::size_t targets = 0;
  std::uint64_t retraces_dropped = 0;  // lost probes' 5-tuples beyond kMaxPendingRetraces
  tracer::ContinuousCounters counters;
};

class PathTracer {
 public:
  using ReportSink = std::function<void(const tracer::PathReport&)>;

  // `io` null: the tracer is down (Start does nothing, SetTargets is ignored)
  // and Status says so. The clock must be real unless `io` moves it.
  PathTracer(tracer::ContinuousConfig config, std::unique_ptr<tracer::TraceIo> io,
             const Clock& clock, ReportSink sink);
  ~PathTracer();
  PathTracer(const PathTracer&) = delete;
  PathTracer& operator=(const PathTracer&) = delete;

  void Start();
  // Any thread; the newest set wins if the tracer has not picked the last one up.
  void SetTargets(std::vector<tracer::TraceTarget> targets);
  // Any thread: a probe of `tuple` was lost (ContinuousTracer::RetraceSoon).
  // At most kMaxPendingRetraces wait for the thread; more are dropped.
  static constexpr std::size_t kMaxPendingRetraces = 4096;
  void RetraceSoon(const tracer::FiveTuple& tuple);
  void RequestStop();
  // RequestStop, then waits for the thread.
  void Stop();

  bool up() const { return io_ != nullptr; }
  TraceStatus Status() const;

 private:
  class StoppableIo;
  void Run();
  void PublishLocked();

  const Clock& clock_;
  ReportSink sink_;
  std::unique_ptr<StoppableIo> io_;
  tracer::ContinuousTracer tracer_;  // tracer thread only

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<std::vector<tracer::TraceTarget>> pending_targets_;
  std::vector<tracer::FiveTuple> pending_retraces_;
  std::vector<tracer::FiveTuple> retraces_;  // tracer thread's swap partner
  bool stop_ = false;
  TraceStatus status_;

  std::thread thread_;
};

// The hostmesh_agent_trace_* families, read through `status` (scrape thread).
void RegisterTraceMetrics(metrics::Registry& registry, std::function<TraceStatus()> status);

}  // namespace hostmesh::agent::app
