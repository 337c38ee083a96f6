#include "analyzer/api/api_handlers.h"

#include <string>
#include <utility>

#include "analyzer/api/render.h"
#include "common/http/query.h"

namespace hostmesh::analyzer::api {
namespace {

http::Response Json(std::string body) {
  http::Response response;
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
    return Json(RenderLinks(*Current(source), suspicious));
  });
  router.Get("/api/v1/incidents",
             [source](const http::Request&) { return Json(RenderIncidents(*Current(source))); });
  router.Get("/api/v1/sla",
             [source](const http::Request&) { return Json(RenderSla(*Current(source))); });
}

}  // namespace hostmesh::analyzer::api
