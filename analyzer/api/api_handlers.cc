#include "analyzer/api/api_handlers.h"

#include <string>
#include <utility>

#include "analyzer/api/dashboard.h"
#include "analyzer/api/render.h"
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

}  // namespace

void MountApi(http::Router& router, SnapshotSource source, const Clock& clock) {
  router.Get("/api/v1/status", [source, &clock](const http::Request&) {
    return Json(RenderStatus(*Current(source), clock.RealtimeNow().time_since_epoch().count()));
  });
  router.Get("/api/v1/rnics",
             [source](const http::Request&) { return Json(RenderRnics(*Current(source))); });
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
    if (!snapshot->inventory_loaded) {
      return Json(RenderError("no inventory loaded (set inventory in the analyzer config)"), 404);
    }
    return Json(RenderTopology(*snapshot));
  });
  router.Get("/api/v1/incidents",
             [source](const http::Request&) { return Json(RenderIncidents(*Current(source))); });
  router.Get("/api/v1/sla",
             [source](const http::Request&) { return Json(RenderSla(*Current(source))); });
  router.Get("/", [](const http::Request&) {
    http::Response response;
    response.content_type = "text/html; charset=utf-8";
    response.body = DashboardHtml();
    response.headers = {{"Cache-Control", "no-cache"},
                        {"Content-Security-Policy", std::string(kDashboardCsp)}};
    return response;
  });
}

}  // namespace hostmesh::analyzer::api
