// TLS on the real server, with certificates made at test time (openssl CLI)
// and libcurl (OpenSSL) as the client: the served certificate, its rotation
// without a restart, a rotation that does not load, and client certificates
// (mutual TLS) required on the API but not on the probes or /metrics.
#include <curl/curl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "common/http/metrics_endpoint.h"
#include "common/http/server.h"
#include "common/metrics/registry.h"

namespace hostmesh::http {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// A CA and certificates signed by it, made once for the suite.
class Pki {
 public:
  Pki() {
    std::string pattern = (std::filesystem::temp_directory_path() / "hm-tls-XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
    ok_ = Ca("ca") && Ca("other-ca") && Leaf("server-one", "ca", "serverAuth") &&
          Leaf("server-two", "ca", "serverAuth") && Leaf("client", "ca", "clientAuth") &&
          Leaf("stranger", "other-ca", "clientAuth");
  }
  ~Pki() { std::filesystem::remove_all(dir_); }
  bool ok() const { return ok_; }
  std::string operator()(const std::string& file) const { return (dir_ / file).string(); }

 private:
  bool Run(const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
  }
  bool Ca(const std::string& name) {
    return Run(
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2"
        " -subj '/CN=" +
        name + "' -keyout " + (*this)(name + ".key") + " -out " + (*this)(name + ".pem"));
  }
  bool Leaf(const std::string& name, const std::string& ca, const std::string& usage) {
    std::ofstream((*this)(name + ".ext"))
        << "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=" << usage << "\n";
    return Run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj '/CN=" +
               name + "' -keyout " + (*this)(name + ".key") + " -out " + (*this)(name + ".csr")) &&
           Run("openssl x509 -req -days 2 -in " + (*this)(name + ".csr") + " -CA " +
               (*this)(ca + ".pem") + " -CAkey " + (*this)(ca + ".key") +
               " -CAcreateserial -extfile " + (*this)(name + ".ext") + " -out " +
               (*this)(name + ".pem"));
  }

  std::filesystem::path dir_;
  bool ok_ = false;
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
    if (!pki_->ok()) GTEST_SKIP() << "openssl could not make the test certificates";
    Install((*pki_)("server-one.pem"), (*pki_)("served.pem"));
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
                             client_ca ? (*pki_)("ca.pem") : ""};
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
  TlsReply reply = HttpsGet(port_, "/healthz", (*pki_)("ca.pem"));
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "ok\n");
  EXPECT_THAT(reply.server_subject, HasSubstr("server-one"));
  EXPECT_EQ(HttpsGet(port_, "/api/v1/status", (*pki_)("ca.pem")).status, 200) << "no auth asked";

  Install((*pki_)("server-two.key"), (*pki_)("served.key"));
  Install((*pki_)("server-two.pem"), (*pki_)("served.pem"));
  const auto until = std::chrono::steady_clock::now() + 5s;
  do {
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "the rotated certificate never served";
    std::this_thread::sleep_for(20ms);
    reply = HttpsGet(port_, "/healthz", (*pki_)("ca.pem"));
    ASSERT_TRUE(reply.ok) << reply.error << " (a handshake failed during the rotation)";
  } while (reply.server_subject.find("server-two") == std::string::npos);

  // A certificate that is not the key's: the pair in service stays.
  const double failures = stats_->Total(HttpEvent::kReloadFailedTlsCert);
  Install((*pki_)("server-one.pem"), (*pki_)("served.pem"));
  const auto until_failed = std::chrono::steady_clock::now() + 5s;
  while (stats_->Total(HttpEvent::kReloadFailedTlsCert) == failures) {
    ASSERT_LT(std::chrono::steady_clock::now(), until_failed) << "the mismatch was not seen";
    std::this_thread::sleep_for(20ms);
  }
  reply = HttpsGet(port_, "/healthz", (*pki_)("ca.pem"));
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_THAT(reply.server_subject, HasSubstr("server-two"));
}

TEST_F(Tls, ClientCertificatesAreRequiredOnTheApiButNotOnProbesOrMetrics) {
  const std::unique_ptr<Server> server = StartServer(true);
  ASSERT_NE(server, nullptr);
  const std::string ca = (*pki_)("ca.pem");
  const TlsReply no_cert = HttpsGet(port_, "/api/v1/status", ca);
  ASSERT_TRUE(no_cert.ok) << no_cert.error;
  EXPECT_EQ(no_cert.status, 403);
  EXPECT_EQ(stats_->Total(HttpEvent::kNoClientCert), 1);
  EXPECT_EQ(HttpsGet(port_, "/healthz", ca).status, 200);
  EXPECT_EQ(HttpsGet(port_, "/readyz", ca).status, 200);
  EXPECT_EQ(HttpsGet(port_, "/metrics", ca).status, 200);

  const TlsReply with_cert =
      HttpsGet(port_, "/api/v1/status", ca, (*pki_)("client.pem"), (*pki_)("client.key"));
  ASSERT_TRUE(with_cert.ok) << with_cert.error;
  EXPECT_EQ(with_cert.status, 200);

  // A certificate from another CA, or one made for a server, fails the handshake.
  const TlsReply stranger =
      HttpsGet(port_, "/healthz", ca, (*pki_)("stranger.pem"), (*pki_)("stranger.key"));
  EXPECT_FALSE(stranger.ok);
  const TlsReply server_cert =
      HttpsGet(port_, "/healthz", ca, (*pki_)("server-one.pem"), (*pki_)("server-one.key"));
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

  options.tls = TlsOptions{(*pki_)("server-two.pem"), (*pki_)("served.key"), ""};
  EXPECT_EQ(Server::Start(options, Router{}, &error), nullptr);
  EXPECT_THAT(error, HasSubstr("not the certificate's"));

  options.tls = TlsOptions{(*pki_)("served.pem"), (*pki_)("served.key"), (*pki_)("client.key")};
  EXPECT_EQ(Server::Start(options, Router{}, &error), nullptr);
  EXPECT_THAT(error, HasSubstr("client.key"));
}

}  // namespace
}  // namespace hostmesh::http
