// hostmesh_tls_certificate_expiry_timestamp_seconds: when the process's own
// certificate and CA bundle expire, read from the files at scrape time, so a
// rotated file shows at once. The alert rule (deploy/prometheus) fires days
// before, while cert-manager or a cron job can still renew.
#pragma once

#include "common/metrics/registry.h"
#include "common/tls/tls_files.h"

namespace hostmesh::tls {

// One series per file, label file="certificate" | "ca": the earliest notAfter
// of the certificates it holds (a chain is as good as its first to expire);
// 0 when the file does not read, which the alert treats as expired.
void RegisterCertificateExpiry(metrics::Registry& registry, const TlsFiles& files);

}  // namespace hostmesh::tls
