#include "common/tls/cert_expiry_metrics.h"

#include <algorithm>

namespace hostmesh::tls {

std::vector<ExpiryFile> ExpiryFilesOf(const TlsFiles& files, const std::string& prefix) {
  std::vector<ExpiryFile> out;
  if (!files.cert.empty()) out.push_back({prefix + "certificate", files.cert});
  if (!files.ca.empty()) out.push_back({prefix + "ca", files.ca});
  return out;
}

void RegisterCertificateExpiry(metrics::Registry& registry, std::vector<ExpiryFile> files) {
  if (files.empty()) return;
  registry.AddCallbackFamily(
      metrics::MetricType::kGauge, "hostmesh_tls_certificate_expiry_timestamp_seconds",
      "When the earliest certificate of each of this process's TLS files expires (Unix time); 0 "
      "when the file does not read.",
      {"file"}, [files = std::move(files)] {
        std::vector<metrics::ScrapedValue> out;
        for (const ExpiryFile& file : files) {
          const std::vector<std::int64_t> expiries = CertificateExpiries(file.path);
          const double earliest =
              expiries.empty()
                  ? 0.0
                  : static_cast<double>(*std::min_element(expiries.begin(), expiries.end()));
          out.push_back({{file.label}, earliest});
        }
        return out;
      });
}

}  // namespace hostmesh::tls
