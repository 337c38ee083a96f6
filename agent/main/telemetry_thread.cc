#include "agent/main/telemetry_thread.h"

#include <optional>
#include <utility>

#include "common/base/thread_name.h"

namespace hostmesh::agent::app {

TelemetryThread::TelemetryThread(const Clock& clock, std::chrono::nanoseconds period,
                                 std::unique_ptr<telemetry::EthtoolStatsSource> ethtool,
                                 std::unique_ptr<telemetry::TelemetryCollector> collector,
                                 TelemetryBoard& board, DeltaSink sink)
    : clock_(clock),
      period_(period),
      ethtool_(std::move(ethtool)),
      collector_(std::move(collector)),
      board_(board),
      sink_(std::move(sink)) {}

TelemetryThread::~TelemetryThread() {
  Stop();
}

void TelemetryThread::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    SetThreadName("hm-telemetry");
    Run();
  });
}

void TelemetryThread::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TelemetryThread::SampleOnce() {
  SampleAt(clock_.MonotonicNow());
}

void TelemetryThread::SampleAt(MonoTime now) {
  std::optional<telemetry::TelemetrySample> sample =
      collector_->Sample(now, clock_.RealtimeNow().time_since_epoch().count());
  if (!sample) return;  // within a period of the last read
  if (sink_) {
    for (std::size_t nic = 0; nic < sample->deltas.size(); ++nic) {
      if (sample->deltas[nic]) sink_(static_cast<std::uint32_t>(nic), *sample->deltas[nic]);
    }
  }
  board_.Publish(std::move(sample->readings), collector_->stats());
}

void TelemetryThread::Run() {
  auto next = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    // The scheduled time rather than the wake-up time: wake-ups are late by
    // a varying few ms, and the collector refuses a read sooner than one
    // period after the last, so a later-than-usual wake-up followed by a
    // prompt one must not cost a sample. (steady_clock is CLOCK_MONOTONIC,
    // the production clock's monotonic time.)
    SampleAt(std::chrono::time_point_cast<std::chrono::nanoseconds>(next));
    lock.lock();
    // Fixed rate, not fixed delay: the deltas cover the period whatever a read costs.
    next += period_;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;  // fell behind (suspend): skip, do not burst
    cv_.wait_until(lock, next, [this] { return stop_; });
  }
}

}  // namespace hostmesh::agent::app
