// Serving a metrics Registry to Prometheus.
#pragma once

#include <string>

#include "common/http/router.h"
#include "common/metrics/registry.h"

namespace hostmesh::http {

// GET path answers registry.Collect() in the text format 0.0.4, written by
// prometheus-cpp's serializer (metrics/exposition.h). The registry must
// outlive the server the router goes into.
void MountMetrics(Router& router, const metrics::Registry& registry, std::string path = "/metrics");

}  // namespace hostmesh::http
