#include "agent/main/telemetry_thread.h"

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
  telemetry::TelemetrySample sample =
      collector_->Sample(clock_.RealtimeNow().time_since_epoch().count());
  if (sink_) {
    for (std::size_t nic = 0; nic < sample.deltas.size(); ++nic) {
      if (sample.deltas[nic]) sink_(static_cast<std::uint32_t>(nic), *sample.deltas[nic]);
    }
  }
  board_.Publish(std::move(sample.readings), collector_->stats());
}

void TelemetryThread::Run() {
  auto next = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    SampleOnce();
    lock.lock();
    // Fixed rate, not fixed delay: the deltas cover the period whatever a read costs.
    next += period_;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;  // fell behind (suspend): skip, do not burst
    cv_.wait_until(lock, next, [this] { return stop_; });
  }
}

}  // namespace hostmesh::agent::app
