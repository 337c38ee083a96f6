#pragma once

// When to warn of a NIC's error-queue messages (transport_stats.h): ICMP
// errors for probes sent and other messages are a degraded mode, but a peer
// whose agent is down answers every probe with one, so the log says how many
// came, at most once per period, and only when some are new.

#include <chrono>
#include <optional>

#include "agent/main/transport_stats.h"
#include "common/base/clock.h"

namespace hostmesh::agent::app {

class ErrorQueueWarner {
 public:
  explicit ErrorQueueWarner(std::chrono::nanoseconds every) : every_(every) {}

  // The messages new since the last warning, when one is due at `now` for
  // the NIC's running counts `total`; nullopt otherwise.
  std::optional<ErrorQueueStats> Due(const ErrorQueueStats& total, MonoTime now) {
    const ErrorQueueStats fresh{total.icmp_errors - warned_.icmp_errors,
                                total.other - warned_.other};
    if (fresh.icmp_errors + fresh.other == 0) return std::nullopt;
    if (at_ && now < *at_ + every_) return std::nullopt;
    warned_ = total;
    at_ = now;
    return fresh;
  }
  // Whether it has warned before (the log says since when).
  bool warned_before() const { return at_.has_value(); }

 private:
  std::chrono::nanoseconds every_;
  ErrorQueueStats warned_;
  std::optional<MonoTime> at_;
};

}  // namespace hostmesh::agent::app
