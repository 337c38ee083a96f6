#include "agent/main/upload_security.h"

#include "common/base/logging.h"
#include "common/tls/cert_expiry_metrics.h"

namespace hostmesh::agent {

void RegisterUploadSecurity(metrics::Registry& registry, const AnalyzerConfig& analyzer,
                            const config::HttpServerConfig& http) {
  registry
      .AddGauge("hostmesh_agent_upload_insecure",
                "1 when results go to the analyzer over plaintext gRPC without authentication "
                "(analyzer.insecure: true).")
      .Set(analyzer.insecure ? 1 : 0);
  std::vector<tls::ExpiryFile> files;
  if (analyzer.insecure) {
    GetLogger("agent")->warn(
        "analyzer.insecure: uploading to {} over plaintext gRPC; neither end is authenticated",
        analyzer.address.ToString());
  } else {
    files = tls::ExpiryFilesOf(analyzer.tls);
  }
  if (http.tls()) {
    for (tls::ExpiryFile& f :
         tls::ExpiryFilesOf({http.tls_cert, http.tls_key, http.tls_client_ca}, "http_")) {
      files.push_back(std::move(f));
    }
  }
  tls::RegisterCertificateExpiry(registry, std::move(files));
}

}  // namespace hostmesh::agent
