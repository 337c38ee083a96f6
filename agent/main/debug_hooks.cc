#include "agent/main/debug_hooks.h"

#include <algorithm>
#include <charconv>

#include "common/http/query.h"
#include "common/http/router.h"

namespace hostmesh::agent::app {
namespace {

http::Response Answer(int status, std::string body) {
  http::Response response;
  response.status = status;
  response.body = std::move(body) + "\n";
  return response;
}

}  // namespace

void DebugHooks::Mount(http::Router& router) {
  router.Post("/debug/qp-error", [this](const http::Request& r) { return OnQpError(r); });
  router.Post("/debug/device-error", [this](const http::Request& r) { return OnDeviceError(r); });
}

std::vector<QpErrorRequest> DebugHooks::Take() {
  std::lock_guard lock(mu_);
  return std::exchange(queued_, {});
}

http::Response DebugHooks::OnQpError(const http::Request& request) {
  const std::optional<std::string> nic = http::QueryParam(request.query, "nic");
  if (!nic || nic->empty()) return Answer(400, "nic=NAME is required");
  const auto it = std::find(nics_.begin(), nics_.end(), *nic);
  if (it == nics_.end()) return Answer(404, "no NIC named '" + *nic + "' in the agent's config");
  QpErrorRequest req{static_cast<NicId>(it - nics_.begin()), 0};
  if (const std::optional<std::string> qp = http::QueryParam(request.query, "qp")) {
    const char* end = qp->data() + qp->size();
    const auto [ptr, ec] = std::from_chars(qp->data(), end, req.qp);
    if (qp->empty() || ec != std::errc{} || ptr != end) {
      return Answer(400, "qp must be a QP index (0: the receive QP), got '" + *qp + "'");
    }
  }
  return Queue(req, "QP " + std::to_string(req.qp) + " of " + *nic + " goes to the error state");
}

http::Response DebugHooks::OnDeviceError(const http::Request& request) {
  const std::optional<std::string> nic = http::QueryParam(request.query, "nic");
  if (!nic || nic->empty()) return Answer(400, "nic=NAME is required");
  const auto it = std::find(nics_.begin(), nics_.end(), *nic);
  if (it == nics_.end()) return Answer(404, "no NIC named '" + *nic + "' in the agent's config");
  return Queue({static_cast<NicId>(it - nics_.begin()), 0, QpErrorRequest::Kind::kDeviceError},
               *nic + "'s device is taken as failed and reopened");
}

http::Response DebugHooks::Queue(QpErrorRequest request, std::string what) {
  std::lock_guard lock(mu_);
  if (queued_.size() >= kMaxQueued) return Answer(503, "too many requests queued");
  queued_.push_back(request);
  return Answer(202, "queued: " + what + " at the probe loop's next turn");
}

}  // namespace hostmesh::agent::app
