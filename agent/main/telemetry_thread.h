#pragma once

// The agent's telemetry thread: reads every NIC's counters once per period
// (TelemetryCollector), publishes the readings for /metrics and hands each
// NIC's delta to a sink (the uploader). Its own thread, so sysfs reads and
// ioctls never delay a probe; it wakes once per period.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "agent/main/telemetry_metrics.h"
#include "agent/telemetry/ethtool_stats.h"
#include "agent/telemetry/telemetry_collector.h"
#include "common/base/clock.h"

namespace hostmesh::agent::app {

class TelemetryThread {
 public:
  using DeltaSink = std::function<void(std::uint32_t nic, const telemetry::NicDelta& delta)>;

  // `ethtool` may be null; `sink` may be empty (no upload). `clock` stamps the
  // readings; the thread waits in real time.
  TelemetryThread(const Clock& clock, std::chrono::nanoseconds period,
                  std::unique_ptr<telemetry::EthtoolStatsSource> ethtool,
                  std::unique_ptr<telemetry::TelemetryCollector> collector, TelemetryBoard& board,
                  DeltaSink sink);
  ~TelemetryThread();
  TelemetryThread(const TelemetryThread&) = delete;
  TelemetryThread& operator=(const TelemetryThread&) = delete;

  // Samples at once, then every period.
  void Start();
  void Stop();
  // One sample on the calling thread at the clock's time (what the thread
  // does each period). The collector refuses to read again within a period
  // of its last read, whoever asks: then nothing is published.
  void SampleOnce();

 private:
  void Run();
  void SampleAt(MonoTime now);

  const Clock& clock_;
  const std::chrono::nanoseconds period_;
  std::unique_ptr<telemetry::EthtoolStatsSource> ethtool_;  // before the collector using it
  std::unique_ptr<telemetry::TelemetryCollector> collector_;
  TelemetryBoard& board_;
  DeltaSink sink_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace hostmesh::agent::app
