// What the uploader's security looks like from outside: a warning and a
// gauge when it runs without TLS, the expiry of its certificate files when it
// runs with.
#pragma once

#include "agent/config/agent_config.h"
#include "common/config/http_server_config.h"
#include "common/metrics/registry.h"

namespace hostmesh::agent {

// hostmesh_agent_upload_insecure (1 with analyzer.insecure), and
// hostmesh_tls_certificate_expiry_timestamp_seconds of the upload's TLS files
// and the metrics server's (`http`, labels http_*); logs the insecure opt-in
// at warn.
void RegisterUploadSecurity(metrics::Registry& registry, const AnalyzerConfig& analyzer,
                            const config::HttpServerConfig& http);

}  // namespace hostmesh::agent
