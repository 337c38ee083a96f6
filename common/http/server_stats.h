// The HTTP server's counters, declared once in the process registry: every
// degraded mode (a cap met, a deadline missed, a credential refused, a
// rotated file that did not load) is counted here and warned of in the log.
//
// At most 12 series: 11 counters in 4 families plus the open connections.
// The agent's exposition is close to its budget of 1,000 series (DESIGN 3),
// so there a counter's series appears at its first event
// (Series::kOnFirstEvent): a healthy agent exports one HTTP series. Alert
// rules should then read a missing series as 0 (`or vector(0)`); the
// analyzer declares them all from the start.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>

#include <array>
#include <atomic>
#include <optional>
#include <string_view>

#include "common/http/auth.h"
#include "common/http/connection_book.h"
#include "common/metrics/registry.h"

namespace hostmesh::http {

// The files the server reloads, as the `file` label names them.
enum class WatchedFile { kTlsCert, kClientCa, kBearerToken };
std::string_view WatchedFileName(WatchedFile file);

enum class HttpEvent {
  kRefusedMaxConnections,  // hostmesh_http_connections_refused_total{reason}
  kRefusedPerPeer,
  kTimeoutRequest,  // hostmesh_http_timeouts_total{phase}
  kTimeoutResponse,
  kNoToken,  // hostmesh_http_auth_failures_total{reason}
  kWrongToken,
  kNoClientCert,
  kBadClientCert,
  kReloadFailedTlsCert,  // hostmesh_http_reload_failures_total{file}
  kReloadFailedClientCa,
  kReloadFailedBearerToken,
  kCount
};
HttpEvent RefusedEvent(Admission why);
// Closing an idle kept-alive connection is normal, not counted: nullopt.
std::optional<HttpEvent> TimeoutEvent(ConnectionPhase phase);
HttpEvent AuthEvent(AuthResult why);
HttpEvent ReloadFailedEvent(WatchedFile file);

class ServerStats {
 public:
  enum class Series { kFromStart, kOnFirstEvent };

  explicit ServerStats(metrics::Registry& registry, Series series = Series::kFromStart);
  ServerStats(const ServerStats&) = delete;
  ServerStats& operator=(const ServerStats&) = delete;

  void Count(HttpEvent event);
  // The count so far (0 while the series does not exist).
  double Total(HttpEvent event) const;
  prometheus::Gauge& open_connections() { return open_; }

 private:
  struct Slot {
    prometheus::Family<prometheus::Counter>* family = nullptr;
    const char* label = "";
    std::string_view value;
    std::atomic<prometheus::Counter*> child{nullptr};
  };
  prometheus::Counter& Child(Slot& slot);

  std::array<Slot, static_cast<std::size_t>(HttpEvent::kCount)> slots_;
  prometheus::Gauge& open_;
};

}  // namespace hostmesh::http
