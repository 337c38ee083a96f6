// TLS files checked before use: a clear error naming the file, and expiry.
#include "common/tls/tls_files.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "common/metrics/registry.h"
#include "common/tls/cert_expiry_metrics.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/common/tls/test_pki.h"

namespace hostmesh::tls {
namespace {

using analyzer::testing::TempDir;
using testing::TestPki;

TEST(tls_files, GoodFilesPassAndEachFaultNamesItsFile) {
  TempDir dir;
  const TestPki pki(dir.path() / "pki");
  const TlsFiles good = pki.Issue("h1", "DNS:h1", false);
  EXPECT_EQ(CheckTlsFiles(good).value_or(""), "");

  TlsFiles missing = good;
  missing.ca = dir.path() / "nope.crt";
  EXPECT_NE(CheckTlsFiles(missing).value_or("").find("CA bundle " + missing.ca.string()),
            std::string::npos);

  const TlsFiles other = pki.Issue("h2", "DNS:h2", false);
  TlsFiles mismatched = good;
  mismatched.key = other.key;
  EXPECT_NE(CheckTlsFiles(mismatched).value_or("").find("does not belong to the certificate"),
            std::string::npos);

  std::ofstream(dir.path() / "junk.pem") << "not a certificate\n";
  TlsFiles junk = good;
  junk.cert = dir.path() / "junk.pem";
  EXPECT_NE(CheckTlsFiles(junk).value_or("").find("holds no PEM certificate"), std::string::npos);
  junk = good;
  junk.key = dir.path() / "junk.pem";
  EXPECT_NE(CheckTlsFiles(junk).value_or("").find("holds no unencrypted PEM private key"),
            std::string::npos);
}

// gRPC's watcher never loads a file stamped 1970-01-01 (found in the soft-RoCE
// guest, whose initramfs stamped every file so): the check says it at start.
TEST(tls_files, AFileStampedAtTheEpochIsRefusedByName) {
  TempDir dir;
  const TestPki pki(dir.path() / "pki");
  const TlsFiles good = pki.Issue("h1", "DNS:h1", false);
  std::filesystem::last_write_time(good.key, std::filesystem::file_time_type::clock::from_sys(
                                                 std::chrono::system_clock::from_time_t(0)));
  const std::string error = CheckTlsFiles(good).value_or("");
  EXPECT_NE(error.find(good.key.string() + ": modification time is 0"), std::string::npos) << error;
  std::filesystem::last_write_time(good.key, std::filesystem::file_time_type::clock::now());
  EXPECT_EQ(CheckTlsFiles(good).value_or(""), "");
}

TEST(tls_files, ExpiryIsReadFromTheFilesAtScrapeTime) {
  TempDir dir;
  const TestPki pki(dir.path() / "pki");
  const TlsFiles files = pki.Issue("h1", "DNS:h1", false, 1);
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const std::vector<std::int64_t> leaf = CertificateExpiries(files.cert);
  ASSERT_EQ(leaf.size(), 1u);
  EXPECT_NEAR(static_cast<double>(leaf[0] - now), 86400.0, 600.0);  // -days 1

  // The HTTP server's own certificate, from another CA, beside gRPC's files.
  const TestPki http_pki(dir.path() / "http-pki", "http-ca");
  const TlsFiles http = http_pki.Issue("h1-http", "DNS:h1", true, 3);
  std::vector<ExpiryFile> watched = ExpiryFilesOf(files);
  for (ExpiryFile& f : ExpiryFilesOf(http, "http_")) watched.push_back(std::move(f));
  ASSERT_EQ(watched.size(), 4u);
  EXPECT_TRUE(ExpiryFilesOf(TlsFiles{}, "http_").empty()) << "no TLS there, no series";
  metrics::Registry registry;
  RegisterCertificateExpiry(registry, std::move(watched));
  const auto value = [&](const std::string& file) {
    for (const auto& family : registry.Collect()) {
      for (const auto& m : family.metric) {
        if (m.label[0].value == file) return m.gauge.value;
      }
    }
    return -1.0;
  };
  EXPECT_EQ(value("certificate"), static_cast<double>(leaf[0]));
  EXPECT_GT(value("ca"), static_cast<double>(now));
  EXPECT_NEAR(value("http_certificate") - static_cast<double>(now), 3 * 86400.0, 600.0);
  EXPECT_GT(value("http_ca"), static_cast<double>(now));
  std::filesystem::remove(files.cert);  // unreadable reads as 0: the alert fires
  EXPECT_EQ(value("certificate"), 0.0);
}

}  // namespace
}  // namespace hostmesh::tls
