// The analyzer app in-process on 127.0.0.1:0: its open-files limit is filled
// while connections arrive, gRPC drops the ingest listener
// (grpc_listener_watch.h), and the app's loop rebuilds the server on the same
// port, so a new agent is answered again and the rebuild is counted. Waits
// poll a condition against a deadline.
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <thread>

#include "analyzer/ingest/grpc_listener_watch.h"
#include "analyzer/main/analyzer_app.h"
#include "tests/analyzer/ingest/analyzer_under_test.h"
#include "tests/analyzer/ingest/new_agent_hello.h"
#include "tests/analyzer/ingest/open_files_full.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/common/http/http_test_client.h"

namespace hostmesh::analyzer::app {
namespace {

using analyzer::testing::Eventually;
using analyzer::testing::HelloAnswered;
using analyzer::testing::OpenFilesFull;
using namespace std::chrono_literals;

TEST(AnalyzerApp, AnIngestListenerGrpcDroppedIsRebuiltOnItsPortAndCounted) {
  ingest::WatchGrpcLog();
  analyzer::testing::TempDir dir;
  AnalyzerConfig config;
  config.grpc_listen = {"127.0.0.1", 0};
  config.grpc_insecure = true;
  config.http_listen = {"127.0.0.1", 0};
  config.data_dir = dir.path() / "data";
  SystemClock clock;
  metrics::Registry registry;
  AnalyzerAppOptions options;
  options.tick = 100ms;
  // A rebuild tried while the test still holds the descriptors cannot listen:
  // the next try comes soon, not after the 30 s of production.
  options.ingest_relisten_gap = 200ms;
  AnalyzerApp app(config, options, clock, registry);
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  const int stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ASSERT_GE(stop_fd, 0);
  std::thread loop([&] { app.Run(stop_fd); });
  const int port = app.grpc_port();
  ASSERT_TRUE(HelloAnswered("127.0.0.1:" + std::to_string(port), 2s));

  const std::uint64_t before = ingest::GrpcListenerFailures();
  {
    OpenFilesFull full(port, 16);
    ASSERT_TRUE(full.ok()) << full.error();
    ASSERT_TRUE(Eventually([&] { return ingest::GrpcListenerFailures() > before; }, 10s))
        << "gRPC never logged a failed accept";
  }
  EXPECT_TRUE(
      Eventually([&] { return HelloAnswered("127.0.0.1:" + std::to_string(port), 2s); }, 20s));
  EXPECT_EQ(app.grpc_port(), port);
  const auto metrics =
      http::testing::Fetch(static_cast<std::uint16_t>(app.http_port()), "GET", "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_EQ(metrics->body.find("hostmesh_ingest_listener_restarts_total 0"), std::string::npos)
      << "the rebuild is not counted";
  const auto ready =
      http::testing::Fetch(static_cast<std::uint16_t>(app.http_port()), "GET", "/readyz");
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->status, 200) << ready->body;

  const std::uint64_t one = 1;
  ASSERT_EQ(::write(stop_fd, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  loop.join();
  ::close(stop_fd);
}

}  // namespace
}  // namespace hostmesh::analyzer::app
