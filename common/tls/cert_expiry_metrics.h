// hostmesh_tls_certificate_expiry_timestamp_seconds: when the process's own
// certificates and CA bundles (gRPC's, and the HTTP server's) expire, read from the files at scrape
// time, so a rotated file shows at once. The alert rule (deploy/prometheus) fires days before,
// while cert-manager or a cron job can still renew.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/metrics/registry.h"
#include "common/tls/tls_files.h"

namespace hostmesh::tls {

// One TLS file of the process and its label value in the series.
struct ExpiryFile {
  std::string label;
  std::filesystem::path path;
};

// The certificate and CA files of the process's TLS material, labelled
// "<prefix>certificate" and "<prefix>ca"; nothing when `files` is unset (no
// TLS there). The key is left out: it does not expire.
std::vector<ExpiryFile> ExpiryFilesOf(const TlsFiles& files, const std::string& prefix = "");

// One series per file, label file=<label>: the earliest notAfter of the
// certificates it holds (a chain is as good as its first to expire); 0 when
// the file does not read, which the alert treats as expired. Registers
// nothing when `files` is empty. Called once per process.
void RegisterCertificateExpiry(metrics::Registry& registry, std::vector<ExpiryFile> files);

}  // namespace hostmesh::tls
