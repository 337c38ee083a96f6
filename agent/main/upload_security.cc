#include "agent/main/upload_security.h"

#include "common/base/logging.h"
#include "common/tls/cert_expiry_metrics.h"

namespace hostmesh::agent {

void RegisterUploadSecurity(metrics::Registry& registry, const AnalyzerConfig& analyzer) {
  registry
      .AddGauge("hostmesh_agent_upload_insecure",
                "1 when results go to the analyzer over plaintext gRPC without authentication "
                "(analyzer.insecure: true).")
      .Set(analyzer.insecure ? 1 : 0);
  if (analyzer.insecure) {
    GetLogger("agent")->warn(
        "analyzer.insecure: uploading to {} over plaintext gRPC; neither end is authenticated",
        analyzer.address.ToString());
    return;
  }
  tls::RegisterCertificateExpiry(registry, analyzer.tls);
}

}  // namespace hostmesh::agent
