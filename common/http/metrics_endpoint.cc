#include "common/http/metrics_endpoint.h"

#include <utility>

#include "common/metrics/exposition.h"

namespace hostmesh::http {

void MountMetrics(Router& router, const metrics::Registry& registry, std::string path) {
  router.Get(std::move(path), [&registry](const Request&) {
    Response response;
    response.content_type = std::string(metrics::kTextFormatContentType);
    response.body = metrics::RenderText(registry);
    return response;
  });
}

}  // namespace hostmesh::http
