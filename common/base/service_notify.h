// Talks to systemd for a Type=notify service (sd_notify(3)): ready once the
// process serves, and a watchdog ping from the main loop so that a loop that
// hangs gets the service restarted. Outside systemd (no NOTIFY_SOCKET) every
// call is a no-op, so the binaries behave the same when run by hand.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "common/base/clock.h"

namespace hostmesh {

// When to ping a watchdog of period `period`: at the first turn, then once
// half the period has passed since the last ping (sd_watchdog_enabled(3)
// advises half), however often the loop turns.
class WatchdogPacer {
 public:
  explicit WatchdogPacer(std::chrono::nanoseconds period) : period_(period) {}
  // True when a ping is due at `now`; the ping is then taken as sent.
  bool Due(MonoTime now) {
    if (last_ && now - *last_ < period_ / 2) return false;
    last_ = now;
    return true;
  }

 private:
  std::chrono::nanoseconds period_;
  std::optional<MonoTime> last_;
};

class ServiceNotifier {
 public:
  // Reads NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID from the environment.
  ServiceNotifier();
  // READY=1 with a one-line STATUS= for `systemctl status`.
  void Ready(std::string_view status);
  // Called at every turn of the main loop: WATCHDOG=1 when the pacer says so.
  void Alive(MonoTime now);
  // The watchdog period systemd asked for; nullopt when there is none.
  std::optional<std::chrono::microseconds> watchdog_period() const;

 private:
  std::optional<WatchdogPacer> pacer_;
  std::optional<std::chrono::microseconds> period_;
  bool ping_failed_ = false;
};

}  // namespace hostmesh
