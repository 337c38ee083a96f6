// The real server on loopback, fetched with a bare socket client.
#include "common/http/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/http/metrics_endpoint.h"
#include "common/metrics/registry.h"
#include "tests/common/http/http_test_client.h"

namespace hostmesh::http {
namespace {

using testing::Fetch;
using ::testing::HasSubstr;
using testing::HttpReply;

std::unique_ptr<Server> StartOrDie(std::vector<std::string> addresses, Router router) {
  ServerOptions options;
  options.listen_addresses = std::move(addresses);
  std::string error;
  std::unique_ptr<Server> server = Server::Start(std::move(options), std::move(router), &error);
  EXPECT_NE(server, nullptr) << error;
  return server;
}

Response TextResponse(std::string body) {
  Response response;
  response.body = std::move(body);
  return response;
}

HttpReply FetchOrDie(std::uint16_t port, std::string_view method, std::string_view target) {
  std::string error;
  std::optional<HttpReply> reply = Fetch(port, method, target, &error);
  EXPECT_TRUE(reply.has_value()) << error;
  return reply.value_or(HttpReply{});
}

class HttpServer : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.AddCallbackFamily(metrics::MetricType::kCounter, "hostmesh_probes_total",
                                "Probes sent.", {"src", "dst"}, [] {
                                  return std::vector<metrics::ScrapedValue>{{{"nic0", "nic1"}, 7}};
                                });
    Router router;
    MountMetrics(router, registry_);
    router.Get("/query",
               [](const Request& request) { return TextResponse(std::string(request.query)); });
    router.Get("/throws",
               [](const Request&) -> Response { throw std::runtime_error("handler broke"); });
    server_ = StartOrDie({"127.0.0.1:0"}, std::move(router));
    ASSERT_NE(server_, nullptr);
    ASSERT_EQ(server_->endpoints().size(), 1u);
    port_ = server_->endpoints()[0].port;
  }

  metrics::Registry registry_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

TEST_F(HttpServer, ReportsTheBoundPort) {
  EXPECT_NE(port_, 0);
  EXPECT_EQ(server_->endpoints()[0].host, "127.0.0.1");
  EXPECT_EQ(server_->endpoints()[0].ToString(), "127.0.0.1:" + std::to_string(port_));
}

TEST_F(HttpServer, ServesMetrics) {
  const HttpReply reply = FetchOrDie(port_, "GET", "/metrics");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.headers.at("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(reply.body,
            "# HELP hostmesh_probes_total Probes sent.\n"
            "# TYPE hostmesh_probes_total counter\n"
            "hostmesh_probes_total{src=\"nic0\",dst=\"nic1\"} 7\n");
  EXPECT_EQ(reply.headers.at("content-length"), std::to_string(reply.body.size()));
}

TEST_F(HttpServer, MetricsAreReadAtEachScrape) {
  registry_.AddGauge("hostmesh_spool_bytes", "Spooled.").Set(42);
  EXPECT_THAT(FetchOrDie(port_, "GET", "/metrics").body, HasSubstr("hostmesh_spool_bytes 42\n"));
}

// The hook runs once per scrape, after the text is rendered.
TEST(HttpMetrics, AfterRenderRunsOncePerScrape) {
  metrics::Registry registry;
  registry.AddGauge("hostmesh_spool_bytes", "Spooled.").Set(1);
  std::atomic<int> renders = 0;
  Router router;
  MountMetrics(router, registry, "/metrics", [&renders] { ++renders; });
  const std::unique_ptr<Server> server = StartOrDie({"127.0.0.1:0"}, std::move(router));
  ASSERT_NE(server, nullptr);
  const std::uint16_t port = server->endpoints()[0].port;
  EXPECT_THAT(FetchOrDie(port, "GET", "/metrics").body, HasSubstr("hostmesh_spool_bytes 1\n"));
  EXPECT_EQ(renders.load(), 1);
  EXPECT_EQ(FetchOrDie(port, "GET", "/nothing").status, 404);
  FetchOrDie(port, "GET", "/metrics");
  EXPECT_EQ(renders.load(), 2);
}

TEST_F(HttpServer, UnknownPathIs404) {
  EXPECT_EQ(FetchOrDie(port_, "GET", "/nothing").status, 404);
  EXPECT_EQ(FetchOrDie(port_, "GET", "/metrics/extra").status, 404);
}

TEST_F(HttpServer, OtherMethodIs405) {
  const HttpReply post = FetchOrDie(port_, "POST", "/metrics");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.headers.at("allow"), "GET, HEAD");
}

TEST_F(HttpServer, HeadAnswersLikeGetWithoutTheBody) {
  const HttpReply get = FetchOrDie(port_, "GET", "/metrics");
  const HttpReply head = FetchOrDie(port_, "HEAD", "/metrics");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(head.headers.at("content-type"), get.headers.at("content-type"));
}

TEST_F(HttpServer, HandlerSeesRawQueryAndNormalizedPath) {
  const HttpReply reply = FetchOrDie(port_, "GET", "/x/../query?nic=nic%200&w=20s");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "nic=nic%200&w=20s");
}

TEST_F(HttpServer, HandlerExceptionIs500) {
  const HttpReply reply = FetchOrDie(port_, "GET", "/throws");
  EXPECT_EQ(reply.status, 500);
  EXPECT_THAT(reply.body, HasSubstr("handler broke"));
}

TEST_F(HttpServer, StopClosesTheSocketAndIsIdempotent) {
  server_->Stop();
  server_->Stop();
  std::string error;
  EXPECT_FALSE(Fetch(port_, "GET", "/metrics", &error).has_value());
  EXPECT_THAT(error, HasSubstr("connect"));
}

TEST_F(HttpServer, BusyPortIsAStartError) {
  ServerOptions options;
  options.listen_addresses = {"127.0.0.1:" + std::to_string(port_)};
  std::string error;
  EXPECT_EQ(Server::Start(options, Router{}, &error), nullptr);
  EXPECT_THAT(error, HasSubstr("Address already in use"));
}

TEST(HttpServerOptions, ListensOnAnyAddressAndSeveralAtOnce) {
  Router router;
  router.Get("/", [](const Request&) { return TextResponse("hi"); });
  std::unique_ptr<Server> server = StartOrDie({"0.0.0.0:0", "127.0.0.1:0"}, std::move(router));
  ASSERT_NE(server, nullptr);
  ASSERT_EQ(server->endpoints().size(), 2u);
  EXPECT_EQ(server->endpoints()[0].host, "0.0.0.0");
  EXPECT_NE(server->endpoints()[0].port, server->endpoints()[1].port);
  for (const Endpoint& endpoint : server->endpoints()) {
    EXPECT_EQ(FetchOrDie(endpoint.port, "GET", "/").body, "hi") << endpoint.ToString();
  }
}

TEST(HttpServerOptions, MalformedOptionsAreStartErrors) {
  for (const char* address : {"9100", ":9100", "127.0.0.1:", "127.0.0.1:http", "127.0.0.1:70000",
                              "127.0.0.1:9100s", "127.0.0.1:1,127.0.0.1:2"}) {
    ServerOptions options;
    options.listen_addresses = {address};
    std::string error;
    EXPECT_EQ(Server::Start(options, Router{}, &error), nullptr) << address;
    EXPECT_THAT(error, HasSubstr("is not host:port")) << address;
  }
  std::string error;
  EXPECT_EQ(Server::Start(ServerOptions{}, Router{}, &error), nullptr);
  EXPECT_THAT(error, HasSubstr("no listen address"));

  ServerOptions unresolvable;
  unresolvable.listen_addresses = {"256.1.1.1:0"};
  EXPECT_EQ(Server::Start(unresolvable, Router{}, &error), nullptr);
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace hostmesh::http
