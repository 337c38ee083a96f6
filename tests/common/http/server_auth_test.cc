// Credentials and probes on the real server: bearer token (missing, wrong,
// right, rotated), /metrics open unless protected, /healthz and /readyz
// never behind credentials, /readyz from the owner's callback.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/http/metrics_endpoint.h"
#include "common/http/server.h"
#include "common/metrics/registry.h"
#include "tests/common/http/http_test_client.h"

namespace hostmesh::http {
namespace {

using namespace std::chrono_literals;
using testing::Fetch;
using testing::FetchWith;
using ::testing::HasSubstr;
using testing::HttpReply;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "hm-auth-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const char* name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Replaced by rename, as rotation tools do: the reader sees the old or the new file.
void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path + ".tmp", std::ios::trunc) << text;
  std::filesystem::rename(path + ".tmp", path);
}

HttpReply Get(std::uint16_t port, std::string_view target, std::string_view headers = "") {
  std::string error;
  std::optional<HttpReply> reply = FetchWith(port, "GET", target, headers, &error);
  EXPECT_TRUE(reply.has_value()) << error;
  return reply.value_or(HttpReply{});
}

class Credentials : public ::testing::Test {
 protected:
  std::unique_ptr<Server> StartServer(bool protect_metrics) {
    WriteFile(dir_ / "token", "first-token\n");
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
    options.bearer_token_file = dir_ / "token";
    options.protect_metrics = protect_metrics;
    options.reload_check_interval = 50ms;
    options.timeout = 1s;
    options.stats = stats_.get();
    options.ready = [this] { return ready_ ? std::string() : std::string("store\nnot open"); };
    options.log = [this](std::string_view line) { Record(warnings_, line); };
    options.log_info = [this](std::string_view line) { Record(infos_, line); };
    std::string error;
    std::unique_ptr<Server> server = Server::Start(options, std::move(router), &error);
    EXPECT_NE(server, nullptr) << error;
    if (server) port_ = server->endpoints()[0].port;
    return server;
  }

  void Record(std::vector<std::string>& lines, std::string_view line) {
    std::lock_guard lock(log_mu_);
    lines.emplace_back(line);
  }
  std::string Lines(const std::vector<std::string>& lines) {
    std::lock_guard lock(log_mu_);
    std::string all;
    for (const std::string& line : lines) all += line + "\n";
    return all;
  }

  TempDir dir_;
  std::mutex log_mu_;
  std::vector<std::string> warnings_;
  std::vector<std::string> infos_;
  metrics::Registry registry_;
  std::unique_ptr<ServerStats> stats_;
  std::atomic<bool> ready_{false};
  std::uint16_t port_ = 0;
};

TEST_F(Credentials, TheApiNeedsTheBearerToken) {
  const std::unique_ptr<Server> server = StartServer(false);
  ASSERT_NE(server, nullptr);
  const HttpReply missing = Get(port_, "/api/v1/status");
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(missing.headers.at("www-authenticate"), "Bearer realm=\"hostmesh\"");
  const HttpReply wrong = Get(port_, "/api/v1/status", "Authorization: Bearer second-token\r\n");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_THAT(wrong.headers.at("www-authenticate"), HasSubstr("invalid_token"));
  const HttpReply right = Get(port_, "/api/v1/status", "Authorization: Bearer first-token\r\n");
  EXPECT_EQ(right.status, 200);
  EXPECT_EQ(right.body, "{}");
  EXPECT_EQ(Get(port_, "/nothing").status, 401) << "no route is told apart without the token";
  EXPECT_EQ(Get(port_, "/nothing", "Authorization: Bearer first-token\r\n").status, 404);
  EXPECT_EQ(stats_->Total(HttpEvent::kNoToken), 2);
  EXPECT_EQ(stats_->Total(HttpEvent::kWrongToken), 1);
}

TEST_F(Credentials, MetricsAndProbesAreOpenByDefault) {
  const std::unique_ptr<Server> server = StartServer(false);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(Get(port_, "/metrics").status, 200);
  EXPECT_EQ(Get(port_, "/healthz").status, 200);
  EXPECT_EQ(Get(port_, "/healthz").body, "ok\n");
  EXPECT_EQ(Get(port_, "/readyz").status, 503);
  EXPECT_EQ(stats_->Total(HttpEvent::kNoToken), 0);
}

TEST_F(Credentials, ProtectMetricsPutsMetricsBehindTheToken) {
  const std::unique_ptr<Server> server = StartServer(true);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(Get(port_, "/metrics").status, 401);
  EXPECT_EQ(Get(port_, "/metrics", "Authorization: Bearer first-token\r\n").status, 200);
  EXPECT_EQ(Get(port_, "/healthz").status, 200);
}

TEST_F(Credentials, ARotatedTokenIsTakenWithoutARestart) {
  const std::unique_ptr<Server> server = StartServer(false);
  ASSERT_NE(server, nullptr);
  WriteFile(dir_ / "token", "second-token\n");
  const auto until = std::chrono::steady_clock::now() + 3s;
  while (Get(port_, "/api/v1/status", "Authorization: Bearer second-token\r\n").status != 200) {
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "the new token was never taken";
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(Get(port_, "/api/v1/status", "Authorization: Bearer first-token\r\n").status, 401);
  EXPECT_EQ(stats_->Total(HttpEvent::kReloadFailedBearerToken), 0);
  EXPECT_THAT(Lines(infos_), HasSubstr("the changed bearer token is in service"));
  EXPECT_THAT(Lines(warnings_), ::testing::Not(HasSubstr("bearer token"))) << "no warning";

  // An empty token file is refused; the token in service stays.
  WriteFile(dir_ / "token", "\n");
  const auto until_failed = std::chrono::steady_clock::now() + 3s;
  while (stats_->Total(HttpEvent::kReloadFailedBearerToken) < 1) {
    ASSERT_LT(std::chrono::steady_clock::now(), until_failed) << "the bad token was not seen";
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(Get(port_, "/api/v1/status", "Authorization: Bearer second-token\r\n").status, 200);
  EXPECT_THAT(Lines(warnings_), HasSubstr("the changed bearer token did not load"));
  EXPECT_THAT(Lines(warnings_), HasSubstr("the token file is empty"));
}

TEST_F(Credentials, ReadyzFollowsTheOwnerAndSaysWhyInOneLine) {
  const std::unique_ptr<Server> server = StartServer(true);
  ASSERT_NE(server, nullptr);
  const HttpReply not_ready = Get(port_, "/readyz");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_EQ(not_ready.body, "not ready: store not open\n");
  ready_ = true;
  const HttpReply ready = Get(port_, "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ready\n");
  std::string error;
  const std::optional<HttpReply> post = Fetch(port_, "POST", "/readyz", &error);
  ASSERT_TRUE(post.has_value()) << error;
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->headers.at("allow"), "GET, HEAD");
}

TEST_F(Credentials, AMissingTokenFileIsAStartErrorNamingIt) {
  Router router;
  ServerOptions options;
  options.listen_addresses = {"127.0.0.1:0"};
  options.bearer_token_file = dir_ / "absent";
  std::string error;
  EXPECT_EQ(Server::Start(options, std::move(router), &error), nullptr);
  EXPECT_THAT(error, HasSubstr("absent"));
}

}  // namespace
}  // namespace hostmesh::http
