// Serving a metrics Registry to Prometheus.
#pragma once

#include <functional>
#include <string>

#include "common/http/router.h"
#include "common/metrics/registry.h"

namespace hostmesh::http {

// GET path answers registry.Collect() in the text format 0.0.4, written by
// prometheus-cpp's serializer (metrics/exposition.h). The registry must
// outlive the server the router goes into. `after_render`, when set, runs in
// the server's thread once the text is rendered and the collected series
// are freed (the agent gives that memory back to the kernel there).
void MountMetrics(Router& router, const metrics::Registry& registry, std::string path = "/metrics",
                  std::function<void()> after_render = {});

}  // namespace hostmesh::http
