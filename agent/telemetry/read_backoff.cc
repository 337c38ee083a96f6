#include "agent/telemetry/read_backoff.h"

#include <algorithm>

namespace hostmesh::agent::telemetry {

ReadBackoff::ReadBackoff(std::chrono::nanoseconds initial, std::chrono::nanoseconds max)
    : initial_(initial), max_(std::max(initial, max)) {}

void ReadBackoff::Failed(MonoTime now) {
  // Doubled by comparison first, so a large max never overflows.
  delay_ = failures_ == 0 ? initial_ : (delay_ > max_ / 2 ? max_ : delay_ * 2);
  ++failures_;
  retry_at_ = now + delay_;
}

void ReadBackoff::Succeeded() {
  failures_ = 0;
  delay_ = std::chrono::nanoseconds{0};
  retry_at_ = MonoTime{};
}

}  // namespace hostmesh::agent::telemetry
