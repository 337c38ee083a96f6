// What the uploader's security looks like from outside: a warning and a
// gauge when it runs without TLS, the expiry of its certificate files when it
// runs with.
#pragma once

#include "agent/config/agent_config.h"
#include "common/metrics/registry.h"

namespace hostmesh::agent {

// hostmesh_agent_upload_insecure (1 with analyzer.insecure), and with TLS
// hostmesh_tls_certificate_expiry_timestamp_seconds; logs the insecure
// opt-in at warn.
void RegisterUploadSecurity(metrics::Registry& registry, const AnalyzerConfig& analyzer);

}  // namespace hostmesh::agent
