// TLS on the real server, with certificates made at test time (TestPki)
// and libcurl (OpenSSL) as the client: the served certificate, its rotation
// without a restart, a rotation that does not load, and client certificates
// (mutual TLS) required on the API but not on the probes or /metrics.
#include <curl/curl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "common/http/metrics_endpoint.h"
#include "common/http/server.h"
#include "common/metrics/registry.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/common/tls/test_pki.h"

namespace hostmesh::http {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// The suite's certificates, made once: two servers and a client of one CA,
// and a client of another CA (tests/common/tls/test_pki.h).
class Pki {
 public:
  Pki() : ca_(dir_.path(), "ca"), other_ca_(dir_.path(), "other-ca") {
    ca_.Issue("server-one", "IP:127.0.0.1", true, 2);
    ca_.Issue("server-two", "IP:127.0.0.1", true, 2);
    ca_.Issue("client", "IP:127.0.0.1", false, 2);
    other_ca_.Issue("stranger", "IP:127.0.0.1", false, 2);
  }
  std::string operator()(const std::string& file) const { return (dir_.path() / file).string(); }

 private:
  analyzer::testing::TempDir dir_;
  tls::testing::TestPki ca_;
  tls::testing::TestPki other_ca_;
};

struct TlsReply {
  bool ok = false;
  long status = 0;
  std::string body;
  std::string server_subject;
  std::string error;
};

std::size_t Append(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// One GET on a fresh connection (a fresh handshake).
TlsReply HttpsGet(std::uint16_t port, const std::string& path, const std::string& ca,
                  const std::string& cert = "", const std::string& key = "") {
  TlsReply reply;
  CURL* curl = curl_easy_init();
  const std::string url = "https://127.0.0.1:" + std::to_string(port) + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CAINFO, ca.c_str());
  curl_easy_setopt(curl, CURLOPT_CERTINFO, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 5L);
  curl_easy_setopt(curl, CURLOPT_FORBID_REUSE, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  if (!cert.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, cert.c_str());
    curl_easy_setopt(curl, CURLOPT_SSLKEY, key.c_str());
  }
  const CURLcode rc = curl_easy_perform(curl);
  reply.ok = rc == CURLE_OK;
  if (!reply.ok) reply.error = curl_easy_strerror(rc);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  curl_certinfo* info = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_CERTINFO, &info) == CURLE_OK && info != nullptr &&
      info->num_of_certs > 0) {
    for (curl_slist* line = info->certinfo[0]; line != nullptr; line = line->next) {
      if (std::string_view(line->data).starts_with("Subject:")) reply.server_subject = line->data;
    }
  }
  curl_easy_cleanup(curl);
  return reply;
}

// Replaces a file by rename, as rotation tools do.
void Install(const std::string& from, const std::string& to) {
  std::filesystem::copy_file(from, to + ".tmp", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(to + ".tmp", to);
}

class Tls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    pki_ = new Pki();
  }
  static void TearDownTestSuite() {
    delete pki_;
    curl_global_cleanup();
  }
  void SetUp() override {
    Install((*pki_)("server-one.crt"), (*pki_)("served.pem"));
    Install((*pki_)("server-one.key"), (*pki_)("served.key"));
  }

  std::unique_ptr<Server> StartServer(bool client_ca) {
    stats_ = std::make_unique<ServerStats>(registry_);
    Router router;
    MountMetrics(router, registry_);
    router.Get("/api/v1/status", [](const Request&) {
      Response r;
      r.body = "{}";
      return r;
    });
    ServerOptions options;
    options.listen_addresses = {"127.0.0.1:0"};
    options.tls = TlsOptions{(*pki_)("served.pem"), (*pki_)("served.key"),
                             client_ca ? (*pki_)("ca.crt") : ""};
    options.reload_check_interval = 50ms;
    options.stats = stats_.get();
    std::string error;
    std::unique_ptr<Server> server = Server::Start(options, std::move(router), &error);
    EXPECT_NE(server, nullptr) << error;
    if (server) port_ = server->endpoints()[0].port;
    return server;
  }

  static Pki* pki_;
  metrics::Registry registry_;
  std::unique_ptr<ServerStats> stats_;
  std::uint16_t port_ = 0;
};
Pki* Tls::pki_ = nullptr;

TEST_F(Tls, ServesTheCertificateAndARotationWithoutARestart) {
  const std::unique_ptr<Server> server = StartServer(false);
  ASSERT_NE(server, nullptr);
  TlsReply reply = HttpsGet(port_, "/healthz", (*pki_)("ca.crt"));
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "ok\n");
  EXPECT_THAT(reply.server_subject, HasSubstr("server-one"));
  EXPECT_EQ(HttpsGet(port_, "/api/v1/status", (*pki_)("ca.crt")).status, 200) << "no auth asked";

  Install((*pki_)("server-two.key"), (*pki_)("served.key"));
  Install((*pki_)("server-two.crt"), (*pki_)("served.pem"));
  const auto until = std::chrono::steady_clock::now() + 5s;
  do {
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "the rotated certificate never served";
    std::this_thread::sleep_for(20ms);
    reply = HttpsGet(port_, "/healthz", (*pki_)("ca.crt"));
    ASSERT_TRUE(reply.ok) << reply.error << " (a handshake failed during the rotation)";
  } while (reply.server_subject.find("server-two") == std::string::npos);

  // A certificate that is not the key's: the pair in service stays.
  const double failures = stats_->Total(HttpEvent::kReloadFailedTlsCert);
  Install((*pki_)("server-one.crt"), (*pki_)("served.pem"));
  const auto until_failed = std::chrono::steady_clock::now() + 5s;
  while (stats_->Total(HttpEvent::kReloadFailedTlsCert) == failures) {
    ASSERT_LT(std::chrono::steady_clock::now(), until_failed) << "the mismatch was not seen";
    std::this_thread::sleep_for(20ms);
  }
  reply = HttpsGet(port_, "/healthz", (*pki_)("ca.crt"));
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_THAT(reply.server_subject, HasSubstr("server-two"));
}

TEST_F(Tls, ClientCertificatesAreRequiredOnTheApiButNotOnProbesOrMetrics) {
  const std::unique_ptr<Server> server = StartServer(true);
  ASSERT_NE(server, nullptr);
  const std::string ca = (*pki_)("ca.crt");
  const TlsReply no_cert = HttpsGet(port_, "/api/v1/status", ca);
  ASSERT_TRUE(no_cert.ok) << no_cert.error;
  EXPECT_EQ(no_cert.status, 403);
  EXPECT_EQ(stats_->Total(HttpEvent::kNoClientCert), 1);
  EXPECT_EQ(HttpsGet(port_, "/healthz", ca).status, 200);
  EXPECT_EQ(HttpsGet(port_, "/readyz", ca).status, 200);
  EXPECT_EQ(HttpsGet(port_, "/metrics", ca).status, 200);

  const TlsReply with_cert =
      HttpsGet(port_, "/api/v1/status", ca, (*pki_)("client.crt"), (*pki_)("client.key"));
  ASSERT_TRUE(with_cert.ok) << with_cert.error;
  EXPECT_EQ(with_cert.status, 200);

  // A certificate from another CA, or one made for a server, fails the handshake.
  const TlsReply stranger =
      HttpsGet(port_, "/healthz", ca, (*pki_)("stranger.crt"), (*pki_)("stranger.key"));
  EXPECT_FALSE(stranger.ok);
  const TlsReply server_cert =
      HttpsGet(port_, "/healthz", ca, (*pki_)("server-one.crt"), (*pki_)("server-one.key"));
  EXPECT_FALSE(server_cert.ok);
  EXPECT_EQ(stats_->Total(HttpEvent::kBadClientCert), 2);
}

TEST_F(Tls, UnreadableCertificateFilesAreStartErrorsNamingThem) {
  ServerOptions options;
  options.listen_addresses = {"127.0.0.1:0"};
  options.tls = TlsOptions{(*pki_)("absent.pem"), (*pki_)("served.key"), ""};
  std::string error;
  EXPECT_EQ(Server::Start(options, Router{}, &error), nullptr);
  EXPECT_THAT(error, HasSubstr("absent.pem"));

  options.tls = TlsOptions{(*pki_)("server-two.crt"), (*pki_)("served.key"), ""};
  EXPECT_EQ(Server::Start(options, Router{}, &error), nullptr);
  EXPECT_THAT(error, HasSubstr("not the certificate's"));

  options.tls = TlsOptions{(*pki_)("served.pem"), (*pki_)("served.key"), (*pki_)("client.key")};
  EXPECT_EQ(Server::Start(options, Router{}, &error), nullptr);
  EXPECT_THAT(error, HasSubstr("client.key"));
}

}  // namespace
}  // namespace hostmesh::http
