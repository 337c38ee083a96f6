#include "common/http/metrics_endpoint.h"

#include <utility>

#include "common/metrics/exposition.h"

namespace hostmesh::http {

void MountMetrics(Router& router, const metrics::Registry& registry, std::string path,
                  std::function<void()> after_render) {
  router.Get(std::move(path), [&registry, after_render = std::move(after_render)](const Request&) {
    Response response;
    response.content_type = std::string(metrics::kTextFormatContentType);
    response.body = metrics::RenderText(registry);
    if (after_render) after_render();
    return response;
  });
}

}  // namespace hostmesh::http
