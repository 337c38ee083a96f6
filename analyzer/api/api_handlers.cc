#include "analyzer/api/api_handlers.h"

#include <charconv>
#include <optional>
#include <string>
#include <utility>

#include "analyzer/api/dashboard.h"
#include "analyzer/api/incident_page.h"
#include "analyzer/api/render.h"
#include "analyzer/api/render_history.h"
#include "common/http/query.h"

namespace hostmesh::analyzer::api {
namespace {

http::Response Json(std::string body, int status = 200) {
  http::Response response;
  response.status = status;
  response.content_type = "application/json";
  response.body = std::move(body);
  response.body += '\n';
  return response;
}

// Before the first snapshot (start-up) the API answers as for an empty one.
std::shared_ptr<const ApiSnapshot> Current(const SnapshotSource& source) {
  std::shared_ptr<const ApiSnapshot> snapshot = source();
  if (!snapshot) snapshot = std::make_shared<const ApiSnapshot>();
  return snapshot;
}

// An optional integer query parameter; nullopt with *error set when malformed.
std::optional<std::int64_t> IntParam(const http::Request& request, std::string_view name,
                                     std::int64_t fallback, std::int64_t min, std::int64_t max,
                                     std::string* error) {
  const auto text = http::QueryParam(request.query, name);
  if (!text) return fallback;
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || value < min || value > max) {
    *error = std::string(name) + " must be an integer in [" + std::to_string(min) + ", " +
             std::to_string(max) + "], got '" + *text + "'";
    return std::nullopt;
  }
  return value;
}

constexpr std::int64_t kNsPerSecond = 1'000'000'000;
constexpr std::int64_t kMaxSeconds = std::int64_t{1} << 33;  // year 2242: no overflow in ns

http::Response History(const http::Request& request, const ApiSnapshot& names,
                       const HistorySource& history, std::int64_t now_ns) {
  std::string error;
  const auto to = IntParam(request, "to", now_ns / kNsPerSecond, 0, kMaxSeconds, &error);
  const auto from = to ? IntParam(request, "from", *to - 3600, 0, kMaxSeconds, &error) : to;
  const auto limit = from ? IntParam(request, "limit", 1000, 1, 100'000, &error) : from;
  if (!limit) return Json(RenderError(error), 400);
  if (*from > *to) return Json(RenderError("from must not be after to"), 400);
  bool truncated = false;
  const auto windows = history(*from * kNsPerSecond, *to * kNsPerSecond,
                               static_cast<std::size_t>(*limit), &truncated);
  return Json(RenderSlaHistory(windows, names, truncated));
}

// ?from=&to= (Unix seconds; default the last 5 minutes up to and including
// now, so a sample that ended this very second is in) &agent= &nic= &limit=
http::Response Telemetry(const http::Request& request, const TelemetrySource& telemetry,
                         std::int64_t now_ns) {
  std::string error;
  const std::int64_t now_ceil = (now_ns + kNsPerSecond - 1) / kNsPerSecond;
  const auto to = IntParam(request, "to", now_ceil, 0, kMaxSeconds, &error);
  const auto from = to ? IntParam(request, "from", *to - 300, 0, kMaxSeconds, &error) : to;
  const auto limit = from ? IntParam(request, "limit", 1000, 1, 100'000, &error) : from;
  if (!limit) return Json(RenderError(error), 400);
  if (*from > *to) return Json(RenderError("from must not be after to"), 400);
  TelemetryQuery query;
  query.from_ns = *from * kNsPerSecond;
  query.to_ns = *to * kNsPerSecond;
  query.agent_id = http::QueryParam(request.query, "agent").value_or("");
  query.nic = http::QueryParam(request.query, "nic").value_or("");
  query.limit = static_cast<std::size_t>(*limit);
  const TelemetryAnswer answer = telemetry(query);
  if (!answer.error.empty()) return Json(RenderError("store: " + answer.error), 500);
  return Json(RenderTelemetry(query, answer));
}

// /api/v1/incidents/ID and /api/v1/incidents/ID/evidence.
http::Response IncidentRoute(const http::Request& request, const SnapshotSource& source,
                             const EvidenceSource& evidence) {
  constexpr std::string_view kPrefix = "/api/v1/incidents/";
  const auto path = ParseIncidentPath(request.path.substr(kPrefix.size()));
  if (!path) {
    return Json(RenderError("expected /api/v1/incidents/ID or /api/v1/incidents/ID/evidence "
                            "with ID a positive number"),
                404);
  }
  const std::shared_ptr<const ApiSnapshot> snapshot = Current(source);
  if (!path->evidence) {
    if (auto body = RenderIncident(*snapshot, path->id)) return Json(std::move(*body));
    return Json(RenderError("no incident " + std::to_string(path->id) +
                            " among the open and recently resolved ones; its evidence may "
                            "still be at /api/v1/incidents/" +
                            std::to_string(path->id) + "/evidence"),
                404);
  }
  if (!evidence) return Json(RenderError("this analyzer keeps no evidence"), 404);
  const EvidenceAnswer answer = evidence(path->id);
  if (!answer.error.empty()) {
    return Json(RenderError("evidence not read: " + answer.error), 503);
  }
  if (!answer.found) {
    return Json(RenderError("no evidence kept for incident " + std::to_string(path->id) +
                            " (never captured, expired, or dropped for the disk cap)"),
                404);
  }
  return Json(RenderEvidence(*snapshot, answer));
}

// The on-call page and each incident's own page; their data comes from the API.
void MountPages(http::Router& router) {
  router.GetUnder("/incidents/", [](const http::Request& request) {
    http::Response response;
    if (!IncidentPageId(request.path.substr(std::string_view("/incidents/").size()))) {
      response.status = 404;
      response.body = "no such page: /incidents/ID with ID a positive number\n";
      return response;
    }
    response.content_type = "text/html; charset=utf-8";
    response.body = IncidentPageHtml();
    response.headers = {{"Cache-Control", "no-cache"},
                        {"Content-Security-Policy", std::string(kDashboardCsp)}};
    return response;
  });
  router.Get("/", [](const http::Request&) {
    http::Response response;
    response.content_type = "text/html; charset=utf-8";
    response.body = DashboardHtml();
    response.headers = {{"Cache-Control", "no-cache"},
                        {"Content-Security-Policy", std::string(kDashboardCsp)}};
    return response;
  });
}

}  // namespace

void MountApi(http::Router& router, SnapshotSource source, const Clock& clock,
              HistorySource history, TelemetrySource telemetry, EvidenceSource evidence) {
  if (telemetry) {
    router.Get("/api/v1/telemetry", [&clock, telemetry](const http::Request& request) {
      return Telemetry(request, telemetry, clock.RealtimeNow().time_since_epoch().count());
    });
  }
  if (history) {
    router.Get("/api/v1/sla/history", [source, &clock, history](const http::Request& request) {
      return History(request, *Current(source), history,
                     clock.RealtimeNow().time_since_epoch().count());
    });
  }
  router.Get("/api/v1/status", [source, &clock](const http::Request&) {
    return Json(RenderStatus(*Current(source), clock.RealtimeNow().time_since_epoch().count()));
  });
  router.Get("/api/v1/rnics", [source, telemetry](const http::Request&) {
    const std::shared_ptr<const ApiSnapshot> snapshot = Current(source);
    if (!telemetry) return Json(RenderRnics(*snapshot));
    // Each RNIC's counter deltas over the judged window, read per request.
    const std::optional<TelemetryQuery> window = WindowTelemetryQuery(*snapshot);
    const TelemetryAnswer deltas = window ? telemetry(*window) : TelemetryAnswer{};
    return Json(RenderRnics(*snapshot, &deltas));
  });
  router.Get("/api/v1/links", [source](const http::Request& request) {
    const bool suspicious = http::QueryParam(request.query, "suspicious").has_value();
    LinkRanking ranking = LinkRanking::kLoss;
    if (const auto kind = http::QueryParam(request.query, "kind")) {
      if (*kind == "latency") {
        ranking = LinkRanking::kLatency;
      } else if (*kind != "loss") {
        return Json(RenderError("kind must be loss or latency"), 400);
      }
    }
    return Json(RenderLinks(*Current(source), suspicious, ranking));
  });
  router.Get("/api/v1/switches", [source](const http::Request& request) {
    const bool suspicious = http::QueryParam(request.query, "suspicious").has_value();
    return Json(RenderSwitches(*Current(source), suspicious));
  });
  router.Get("/api/v1/coverage",
             [source](const http::Request&) { return Json(RenderCoverage(*Current(source))); });
  router.Get("/api/v1/topology", [source](const http::Request&) {
    const std::shared_ptr<const ApiSnapshot> snapshot = Current(source);
    if (!snapshot->inventory) {
      return Json(RenderError("no topology yet: no inventory loaded and nothing learned from "
                              "traceroutes so far"),
                  404);
    }
    return Json(RenderTopology(*snapshot));
  });
  router.Get("/api/v1/topology/disagreements", [source](const http::Request&) {
    const std::shared_ptr<const ApiSnapshot> snapshot = Current(source);
    if (!snapshot->inventory_loaded) {
      return Json(RenderError("no inventory loaded: the fabric is learned from traceroutes, so "
                              "there is nothing to disagree with"),
                  404);
    }
    return Json(RenderDisagreements(*snapshot));
  });
  router.Get("/api/v1/incidents",
             [source](const http::Request&) { return Json(RenderIncidents(*Current(source))); });
  router.GetUnder("/api/v1/incidents/", [source, evidence](const http::Request& request) {
    return IncidentRoute(request, source, evidence);
  });
  router.Get("/api/v1/sla",
             [source](const http::Request&) { return Json(RenderSla(*Current(source))); });
  MountPages(router);
}

}  // namespace hostmesh::analyzer::api
