// The server's options checked before anything binds: pure, no sockets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/http/server.h"
#include "common/http/server_config.h"

namespace hostmesh::http {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

ServerOptions Valid() {
  ServerOptions options;
  options.listen_addresses = {"127.0.0.1:0"};
  return options;
}

TEST(HttpServerOptionsCheck, DefaultsWithAnAddressAreValid) {
  EXPECT_EQ(ValidateServerOptions(Valid()), "");
  ServerOptions v6 = Valid();
  v6.listen_addresses = {"[::1]:0", "localhost:9100", "0.0.0.0:1"};
  EXPECT_EQ(ValidateServerOptions(v6), "");
}

TEST(HttpServerOptionsCheck, EachProblemNamesItsOption) {
  const auto problem = [](auto change) {
    ServerOptions options = Valid();
    change(options);
    return ValidateServerOptions(options);
  };
  EXPECT_EQ(problem([](ServerOptions& o) { o.listen_addresses.clear(); }), "no listen address");
  EXPECT_THAT(problem([](ServerOptions& o) { o.listen_addresses = {"::1:80"}; }),
              HasSubstr("is not host:port"));
  EXPECT_THAT(problem([](ServerOptions& o) { o.listen_addresses = {"[10.0.0.1]:80"}; }),
              HasSubstr("is not host:port"));
  EXPECT_THAT(problem([](ServerOptions& o) { o.workers = 0; }), HasSubstr("workers"));
  EXPECT_THAT(problem([](ServerOptions& o) { o.max_connections = 0; }),
              HasSubstr("max_connections must be"));
  EXPECT_THAT(problem([](ServerOptions& o) { o.max_connections_per_peer = 0; }),
              HasSubstr("max_connections_per_peer"));
  EXPECT_THAT(problem([](ServerOptions& o) {
                o.max_connections = 10;
                o.max_connections_per_peer = 11;
              }),
              HasSubstr("max_connections_per_peer must be between 1 and max_connections (10)"));
  EXPECT_THAT(problem([](ServerOptions& o) { o.timeout = 0s; }), HasSubstr("timeout"));
  EXPECT_THAT(problem([](ServerOptions& o) { o.max_request_bytes = 100; }),
              HasSubstr("max_request_bytes"));
  EXPECT_THAT(problem([](ServerOptions& o) {
                o.tls = TlsOptions{"cert.pem", "", ""};
              }),
              HasSubstr("key file"));
  EXPECT_THAT(problem([](ServerOptions& o) { o.reload_check_interval = 0s; }),
              HasSubstr("reload_check_interval"));
}

TEST(HttpServerOptionsCheck, ConfigKeysMapOntoOptions) {
  config::HttpServerConfig config;
  config.tls_cert = "/c.pem";
  config.tls_key = "/k.pem";
  config.tls_client_ca = "/ca.pem";
  config.bearer_token_file = "/token";
  config.protect_metrics = true;
  config.max_connections = 5;
  config.max_connections_per_peer = 2;
  config.timeout = 3s;
  ServerOptions options = Valid();
  ApplyHttpServerConfig(config, options);
  ASSERT_TRUE(options.tls.has_value());
  EXPECT_EQ(options.tls->cert_file, "/c.pem");
  EXPECT_EQ(options.tls->key_file, "/k.pem");
  EXPECT_EQ(options.tls->client_ca_file, "/ca.pem");
  EXPECT_EQ(options.bearer_token_file, "/token");
  EXPECT_TRUE(options.protect_metrics);
  EXPECT_EQ(options.max_connections, 5u);
  EXPECT_EQ(options.max_connections_per_peer, 2u);
  EXPECT_EQ(options.timeout, 3s);
  EXPECT_EQ(ValidateServerOptions(options), "");

  ServerOptions plain = Valid();
  ApplyHttpServerConfig(config::HttpServerConfig{}, plain);
  EXPECT_FALSE(plain.tls.has_value());
}

}  // namespace
}  // namespace hostmesh::http
