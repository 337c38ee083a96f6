#include "common/tls/cert_expiry_metrics.h"

#include <algorithm>

namespace hostmesh::tls {

void RegisterCertificateExpiry(metrics::Registry& registry, const TlsFiles& files) {
  registry.AddCallbackFamily(
      metrics::MetricType::kGauge, "hostmesh_tls_certificate_expiry_timestamp_seconds",
      "When the earliest certificate of each of this process's TLS files expires (Unix time); 0 "
      "when the file does not read.",
      {"file"}, [files] {
        std::vector<metrics::ScrapedValue> out;
        for (const auto& [label, path] :
             {std::pair{"certificate", files.cert}, std::pair{"ca", files.ca}}) {
          const std::vector<std::int64_t> expiries = CertificateExpiries(path);
          const double earliest =
              expiries.empty()
                  ? 0.0
                  : static_cast<double>(*std::min_element(expiries.begin(), expiries.end()));
          out.push_back({{label}, earliest});
        }
        return out;
      });
}

}  // namespace hostmesh::tls
