#include "common/http/server_stats.h"

#include <map>
#include <string>

namespace hostmesh::http {

std::string_view WatchedFileName(WatchedFile file) {
  switch (file) {
    case WatchedFile::kTlsCert:
      return "tls_cert";
    case WatchedFile::kClientCa:
      return "client_ca";
    case WatchedFile::kBearerToken:
      return "bearer_token";
  }
  return "unknown";
}

HttpEvent RefusedEvent(Admission why) {
  return why == Admission::kRefusedPerPeer ? HttpEvent::kRefusedPerPeer
                                           : HttpEvent::kRefusedMaxConnections;
}

std::optional<HttpEvent> TimeoutEvent(ConnectionPhase phase) {
  switch (phase) {
    case ConnectionPhase::kRequest:
    case ConnectionPhase::kHandling:
      return HttpEvent::kTimeoutRequest;
    case ConnectionPhase::kResponse:
      return HttpEvent::kTimeoutResponse;
    case ConnectionPhase::kIdle:
      break;
  }
  return std::nullopt;
}

HttpEvent AuthEvent(AuthResult why) {
  switch (why) {
    case AuthResult::kWrongToken:
      return HttpEvent::kWrongToken;
    case AuthResult::kNoClientCert:
      return HttpEvent::kNoClientCert;
    case AuthResult::kNoToken:
    case AuthResult::kAllowed:
      break;
  }
  return HttpEvent::kNoToken;
}

HttpEvent ReloadFailedEvent(WatchedFile file) {
  switch (file) {
    case WatchedFile::kClientCa:
      return HttpEvent::kReloadFailedClientCa;
    case WatchedFile::kBearerToken:
      return HttpEvent::kReloadFailedBearerToken;
    case WatchedFile::kTlsCert:
      break;
  }
  return HttpEvent::kReloadFailedTlsCert;
}

ServerStats::ServerStats(metrics::Registry& r, Series series)
    : open_(r.AddGauge("hostmesh_http_connections_open",
                       "HTTP connections open now (admitted and not yet closed).")) {
  auto& refused = r.AddCounterFamily(
      "hostmesh_http_connections_refused_total",
      "HTTP connections closed on arrival, by the cap they met (max_connections, "
      "max_connections_per_peer).");
  auto& timeouts = r.AddCounterFamily(
      "hostmesh_http_timeouts_total",
      "HTTP connections closed at their deadline, by what they were waiting for: request (a slow "
      "or silent client), response (a slow reader).");
  auto& auth = r.AddCounterFamily(
      "hostmesh_http_auth_failures_total",
      "HTTP requests (no_token, wrong_token, no_client_cert) and TLS handshakes (bad_client_cert) "
      "refused for their credentials.");
  auto& reloads = r.AddCounterFamily(
      "hostmesh_http_reload_failures_total",
      "Changed TLS or token files that did not load; the previous ones stay in service.");
  const auto set = [this](HttpEvent e, prometheus::Family<prometheus::Counter>& family,
                          const char* label, std::string_view value) {
    Slot& slot = slots_[static_cast<std::size_t>(e)];
    slot.family = &family;
    slot.label = label;
    slot.value = value;
  };
  set(HttpEvent::kRefusedMaxConnections, refused, "reason", "max_connections");
  set(HttpEvent::kRefusedPerPeer, refused, "reason", "max_connections_per_peer");
  set(HttpEvent::kTimeoutRequest, timeouts, "phase", "request");
  set(HttpEvent::kTimeoutResponse, timeouts, "phase", "response");
  set(HttpEvent::kNoToken, auth, "reason", AuthResultName(AuthResult::kNoToken));
  set(HttpEvent::kWrongToken, auth, "reason", AuthResultName(AuthResult::kWrongToken));
  set(HttpEvent::kNoClientCert, auth, "reason", AuthResultName(AuthResult::kNoClientCert));
  set(HttpEvent::kBadClientCert, auth, "reason", "bad_client_cert");
  set(HttpEvent::kReloadFailedTlsCert, reloads, "file", WatchedFileName(WatchedFile::kTlsCert));
  set(HttpEvent::kReloadFailedClientCa, reloads, "file", WatchedFileName(WatchedFile::kClientCa));
  set(HttpEvent::kReloadFailedBearerToken, reloads, "file",
      WatchedFileName(WatchedFile::kBearerToken));
  if (series == Series::kFromStart) {
    for (Slot& slot : slots_) Child(slot);
  }
}

prometheus::Counter& ServerStats::Child(Slot& slot) {
  prometheus::Counter* child = slot.child.load(std::memory_order_acquire);
  if (child == nullptr) {
    // Family::Add returns the existing child to a racing second caller.
    child = &slot.family->Add(
        std::map<std::string, std::string>{{slot.label, std::string(slot.value)}});
    slot.child.store(child, std::memory_order_release);
  }
  return *child;
}

void ServerStats::Count(HttpEvent event) {
  Child(slots_[static_cast<std::size_t>(event)]).Increment();
}

double ServerStats::Total(HttpEvent event) const {
  const prometheus::Counter* child =
      slots_[static_cast<std::size_t>(event)].child.load(std::memory_order_acquire);
  return child != nullptr ? child->Value() : 0;
}

}  // namespace hostmesh::http
