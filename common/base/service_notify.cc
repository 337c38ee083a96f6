#include "common/base/service_notify.h"

#include <stddef.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/base/logging.h"
#include "common/base/unique_fd.h"

// The notify protocol by hand (one datagram to $NOTIFY_SOCKET; sd_notify(3)
// documents it as stable for reimplementation) rather than libsystemd: that
// library and what it loads (libgcrypt, liblzma, libzstd, liblz4, libcap) cost
// every agent about 120 KB of private memory for two calls.

namespace hostmesh {
namespace {

// WATCHDOG_USEC as sd_watchdog_enabled(3) reads it: > 0 the period in us,
// 0 no watchdog (unset, or WATCHDOG_PID names another process), < 0 -errno.
long long WatchdogUsec() {
  const char* usec = ::getenv("WATCHDOG_USEC");
  if (usec == nullptr) return 0;
  if (const char* pid = ::getenv("WATCHDOG_PID"); pid != nullptr) {
    long long value = 0;
    const auto [end, ec] = std::from_chars(pid, pid + std::strlen(pid), value);
    if (ec != std::errc{} || *end != '\0' || value <= 0) return -EINVAL;
    if (value != ::getpid()) return 0;
  }
  long long value = 0;
  const auto [end, ec] = std::from_chars(usec, usec + std::strlen(usec), value);
  if (ec != std::errc{} || *end != '\0' || value <= 0) return -EINVAL;
  return value;
}

// Sends `message` to $NOTIFY_SOCKET: 0 when there is none (not under
// systemd), 1 when sent, -errno when it failed.
int Notify(std::string_view message) {
  const char* path = ::getenv("NOTIFY_SOCKET");
  if (path == nullptr || *path == '\0') return 0;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::size_t length = std::strlen(path);
  // A path, or '@' for the abstract namespace (leading NUL); systemd's other
  // forms (vsock) are not for a service on the host itself.
  if ((path[0] != '/' && path[0] != '@') || length >= sizeof addr.sun_path) return -EAFNOSUPPORT;
  std::memcpy(addr.sun_path, path, length);
  if (path[0] == '@') addr.sun_path[0] = '\0';
  const UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return -errno;
  const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
  if (::sendto(fd.get(), message.data(), message.size(), MSG_NOSIGNAL,
               reinterpret_cast<const sockaddr*>(&addr), size) < 0) {
    return -errno;
  }
  return 1;
}

}  // namespace

ServiceNotifier::ServiceNotifier() {
  const long long usec = WatchdogUsec();
  if (usec < 0) {
    GetLogger("systemd")->warn("WATCHDOG_USEC or WATCHDOG_PID is malformed: no watchdog pings");
  } else if (usec > 0) {
    period_ = std::chrono::microseconds{static_cast<std::int64_t>(usec)};
    pacer_.emplace(*period_);
  }
}

void ServiceNotifier::Ready(std::string_view status) {
  std::string message = "READY=1\nSTATUS=";
  message += status;
  // 0: outside systemd; < 0: the socket is there and refused, worth a line.
  if (const int rc = Notify(message); rc < 0) {
    GetLogger("systemd")->warn("sd_notify READY=1 failed: {}", std::strerror(-rc));
  }
}

void ServiceNotifier::Alive(MonoTime now) {
  if (!pacer_ || !pacer_->Due(now)) return;
  // Once: if pings do not arrive, systemd restarts the service and says why.
  if (const int rc = Notify("WATCHDOG=1"); rc < 0 && !ping_failed_) {
    ping_failed_ = true;
    GetLogger("systemd")->warn("sd_notify WATCHDOG=1 failed: {}", std::strerror(-rc));
  }
}

std::optional<std::chrono::microseconds> ServiceNotifier::watchdog_period() const {
  return period_;
}

}  // namespace hostmesh
