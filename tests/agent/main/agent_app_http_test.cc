// The agent's metrics server as the app wires it, on loopback: /healthz
// throughout, /readyz once the probe loop runs, /metrics open without
// credentials.
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "agent/main/agent_app.h"
#include "common/metrics/registry.h"
#include "tests/agent/upload/fake_upload_channel.h"
#include "tests/common/http/http_test_client.h"
#include "tests/support/fake_transport.h"

namespace hostmesh::agent::app {
namespace {

using namespace std::chrono_literals;

constexpr const char* kConfig = R"(host: h000
transport: udp
analyzer:
  address: 127.0.0.1:1
probe:
  interval: 10ms
  timeout: 100ms
metrics:
  listen: 127.0.0.1:0
traceroute: {enabled: false}
telemetry: {enabled: false}
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.1, netdev: nic0}
  - {name: nic1, rail: 1, ip: 198.18.0.5, netdev: nic1}
)";

int Status(std::uint16_t port, const char* path) {
  const auto reply = http::testing::Fetch(port, "GET", path);
  return reply ? reply->status : 0;
}

// What the QP-error hook was asked, by the probe loop's thread.
struct QpErrorCalls {
  std::mutex mu;
  std::vector<std::pair<NicId, std::uint32_t>> calls;
  std::vector<std::pair<NicId, std::uint32_t>> Get() {
    std::lock_guard lock(mu);
    return calls;
  }
};

// A fake transport; with `qp_errors`, hooks that record what they were asked.
AgentAppOptions FakeOptions(QpErrorCalls* qp_errors = nullptr) {
  AgentAppOptions options;
  options.upload_flush_timeout = 100ms;
  options.make_transport = [qp_errors](const AgentConfig& config, const Clock& c) {
    FakeTransportOptions fake;
    fake.num_nics = static_cast<std::uint32_t>(config.nics.size());
    BuiltTransport built;
    built.transport = std::make_unique<FakeTransport>(c, fake);
    built.kind = Transport::kUdp;
    if (qp_errors != nullptr) {
      built.force_qp_error = [qp_errors](NicId nic, std::uint32_t qp) {
        std::lock_guard lock(qp_errors->mu);
        qp_errors->calls.emplace_back(nic, qp);
        return std::string();
      };
      built.force_device_error = [](NicId) { return std::string(); };
    }
    return built;
  };
  options.make_channel = [](upload::ChannelEventSink) {
    return std::make_unique<upload::testing::FakeUploadChannel>();
  };
  return options;
}

void StopRun(std::future<bool>& run, int stop) {
  const std::uint64_t one = 1;
  ASSERT_EQ(::write(stop, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  ASSERT_EQ(run.wait_for(5s), std::future_status::ready);
  run.get();
  ::close(stop);
}

TEST(agent_app_http, ReadyOnceProbingHasStarted) {
  const SystemClock clock;
  metrics::Registry registry;
  const AgentAppOptions options = FakeOptions();
  AgentApp app(ParseAgentConfig(kConfig, "agent.yaml"), options, clock, registry);
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  const std::uint16_t port = app.metrics_port();
  ASSERT_NE(port, 0);
  EXPECT_EQ(Status(port, "/healthz"), 200);
  const auto before = http::testing::Fetch(port, "GET", "/readyz");
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->status, 503);
  EXPECT_EQ(before->body, "not ready: probing has not started\n");

  const int stop = ::eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(stop, 0);
  auto run = std::async(std::launch::async, [&] { return app.Run(stop); });
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (Status(port, "/readyz") != 200 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);  // polling period
  }
  EXPECT_EQ(Status(port, "/readyz"), 200);
  EXPECT_EQ(Status(port, "/metrics"), 200) << "no credentials configured";
  StopRun(run, stop);
}

// The unauthenticated test hooks are not on the metrics port, which an
// operator opens to the network, but on a loopback server of their own.
TEST(agent_app_http, DebugHooksAreServedApartOnLoopback) {
  const SystemClock clock;
  metrics::Registry registry;
  QpErrorCalls qp_errors;
  const AgentAppOptions options = FakeOptions(&qp_errors);
  std::string config = kConfig;
  config.replace(config.find("  listen: 127.0.0.1:0\n"), 0,
                 "  debug_hooks: true\n  debug_hooks_listen: 127.0.0.1:0\n");
  AgentApp app(ParseAgentConfig(config, "agent.yaml"), options, clock, registry);
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  const std::uint16_t hooks = app.debug_hooks_port();
  ASSERT_NE(hooks, 0);
  ASSERT_NE(hooks, app.metrics_port());
  const auto on_metrics =
      http::testing::Fetch(app.metrics_port(), "POST", "/debug/qp-error?nic=nic1");
  ASSERT_TRUE(on_metrics.has_value());
  EXPECT_EQ(on_metrics->status, 404);
  const auto queued = http::testing::Fetch(hooks, "POST", "/debug/qp-error?nic=nic1");
  ASSERT_TRUE(queued.has_value());
  EXPECT_EQ(queued->status, 202) << queued->body;

  const int stop = ::eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(stop, 0);
  auto run = std::async(std::launch::async, [&] { return app.Run(stop); });
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (qp_errors.Get().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);  // polling period
  }
  StopRun(run, stop);
  EXPECT_EQ(qp_errors.Get(), (std::vector<std::pair<NicId, std::uint32_t>>{{1, 0}}));
}

}  // namespace
}  // namespace hostmesh::agent::app
