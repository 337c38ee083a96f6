#include "common/base/service_notify.h"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <string>

#include "common/base/logging.h"

namespace hostmesh {

ServiceNotifier::ServiceNotifier() {
  std::uint64_t usec = 0;
  const int enabled = ::sd_watchdog_enabled(0, &usec);
  if (enabled < 0) {
    GetLogger("systemd")->warn("WATCHDOG_USEC is malformed ({}): no watchdog pings", -enabled);
  } else if (enabled > 0 && usec > 0) {
    period_ = std::chrono::microseconds{static_cast<std::int64_t>(usec)};
    pacer_.emplace(*period_);
  }
}

void ServiceNotifier::Ready(std::string_view status) {
  std::string message = "READY=1\nSTATUS=";
  message += status;
  // 0: outside systemd; < 0: the socket is there and refused, worth a line.
  if (const int rc = ::sd_notify(0, message.c_str()); rc < 0) {
    GetLogger("systemd")->warn("sd_notify READY=1 failed: error {}", -rc);
  }
}

void ServiceNotifier::Alive(MonoTime now) {
  if (!pacer_ || !pacer_->Due(now)) return;
  // Once: if pings do not arrive, systemd restarts the service and says why.
  if (const int rc = ::sd_notify(0, "WATCHDOG=1"); rc < 0 && !ping_failed_) {
    ping_failed_ = true;
    GetLogger("systemd")->warn("sd_notify WATCHDOG=1 failed: error {}", -rc);
  }
}

std::optional<std::chrono::microseconds> ServiceNotifier::watchdog_period() const {
  return period_;
}

}  // namespace hostmesh
