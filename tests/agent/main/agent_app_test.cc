// The agent's loop in real time over the in-memory transport, with an
// analyzer that never answers: it must probe anyway, stop on the stop fd,
// decide every outstanding probe and give up the flush at its deadline.
#include "agent/main/agent_app.h"

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

#include "common/base/exit_codes.h"
#include "common/metrics/registry.h"
#include "tests/agent/telemetry/fake_sysfs.h"
#include "tests/agent/upload/fake_upload_channel.h"
#include "tests/support/fake_transport.h"

namespace hostmesh::agent::app {
namespace {

using namespace std::chrono_literals;

constexpr const char* kConfig = R"(host: h000
transport: udp
analyzer:
  address: 127.0.0.1:1
  insecure: true
probe:
  interval: 10ms
  timeout: 100ms
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.1, netdev: nic0}
  - {name: nic1, rail: 1, ip: 198.18.0.5, netdev: nic1}
  - {name: nic2, rail: 2, ip: 198.18.0.9, netdev: nic2}
)";

double Value(const metrics::Registry& registry, const std::string& name) {
  double total = 0;
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& m : family.metric) total += m.counter.value + m.gauge.value;
  }
  return total;
}

// A config the transport chosen at start cannot run (verbs, and NICs that
// name no RDMA device) is the operator's to fix: exit 2, so systemd stops
// instead of restarting it in a loop. A start that fails otherwise is 1.
TEST(agent_app, AConfigTheChosenTransportRefusesIsAConfigError) {
  const SystemClock clock;
  metrics::Registry registry;
  AgentAppOptions options;
  options.serve_metrics = false;
  options.make_transport = [](const AgentConfig& config, const Clock& c) {
    FakeTransportOptions fake;
    fake.num_nics = static_cast<std::uint32_t>(config.nics.size());
    BuiltTransport built;
    built.transport = std::make_unique<FakeTransport>(c, fake);
    built.kind = Transport::kVerbs;  // as `auto` would choose on a host with the devices
    return built;
  };
  AgentApp app(ParseAgentConfig(kConfig, "agent.yaml"), options, clock, registry);
  std::string error;
  EXPECT_FALSE(app.Start(&error));
  EXPECT_EQ(error, "nics[0].rdma_device: required for the verbs transport");
  EXPECT_EQ(app.start_exit_code(), kExitConfig);

  metrics::Registry other_registry;
  options.make_transport = [](const AgentConfig&, const Clock&) -> BuiltTransport {
    throw std::runtime_error("no such device");
  };
  AgentApp failing(ParseAgentConfig(kConfig, "agent.yaml"), options, clock, other_registry);
  EXPECT_FALSE(failing.Start(&error));
  EXPECT_EQ(failing.start_exit_code(), kExitFailure);
}

AgentAppOptions FakeWiring() {
  AgentAppOptions options;
  options.serve_metrics = false;
  options.upload_flush_timeout = 100ms;
  options.publish_period = 10ms;
  options.make_transport = [](const AgentConfig& config, const Clock& c) {
    FakeTransportOptions fake;
    fake.num_nics = static_cast<std::uint32_t>(config.nics.size());
    BuiltTransport built;
    built.transport = std::make_unique<FakeTransport>(c, fake);
    built.kind = Transport::kUdp;
    return built;
  };
  // Open is recorded and never answered: an analyzer that does not respond.
  options.make_channel = [](upload::ChannelEventSink) {
    return std::make_unique<upload::testing::FakeUploadChannel>();
  };
  return options;
}

// Polls (real time: the app runs on its own thread) until `done` or 30 s.
template <typename Done>
void Await(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);  // polling period
  }
}

double Labelled(const metrics::Registry& registry, const std::string& name,
                const std::string& label_value) {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& m : family.metric) {
      if (!m.label.empty() && m.label[0].value == label_value) {
        return m.counter.value + m.gauge.value;
      }
    }
  }
  return -1;
}

// Self-protection in the running loop, on a fake /proc: full CPU pressure
// steps the rate down to the lowest step, calm brings it back; the probes
// slow down and speed up with it.
TEST(agent_app, SelfProtectionShedsUnderPressureAndRecovers) {
  telemetry::testing::FakeSysfs fs;
  fs.Write("proc/pressure/cpu", "some avg10=95.00 avg60=50.00 avg300=10.00 total=1\n");
  const std::string yaml = std::string(kConfig) + "protect:\n  root: " + fs.root().string() +
                           "\n  sample_every: 100ms\n  step_down_every: 100ms\n"
                           "  calm_for: 1s\n";
  const SystemClock clock;
  metrics::Registry registry;
  AgentAppOptions options = FakeWiring();
  AgentApp app(ParseAgentConfig(yaml, "agent.yaml"), options, clock, registry);
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  const int stop = ::eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(stop, 0);
  auto run = std::async(std::launch::async, [&] { return app.Run(stop); });

  Await([&] { return Value(registry, "hostmesh_agent_probe_rate_fraction") == 0.1; });
  EXPECT_EQ(Value(registry, "hostmesh_agent_probe_rate_fraction"), 0.1);
  EXPECT_EQ(Value(registry, "hostmesh_agent_shedding_step"), 3);
  EXPECT_EQ(Labelled(registry, "hostmesh_agent_pressure_percent", "cpu"), 95);
  EXPECT_EQ(Value(registry, "hostmesh_agent_pressure_signals"), 1) << "only the host's CPU PSI";
  EXPECT_EQ(Labelled(registry, "hostmesh_agent_shedding_changes_total", "down"), 3);
  // Never zero: the lowest step still probes (the rate itself is the
  // scheduler's, tested in virtual time).
  const double before = Value(registry, "hostmesh_agent_probes_sent_total");
  Await([&] { return Value(registry, "hostmesh_agent_probes_sent_total") > before + 10; });
  EXPECT_GT(Value(registry, "hostmesh_agent_probes_sent_total"), before + 10);

  fs.Write("proc/pressure/cpu", "some avg10=0.00 avg60=50.00 avg300=10.00 total=1\n");
  Await([&] { return Value(registry, "hostmesh_agent_probe_rate_fraction") == 1.0; });
  EXPECT_EQ(Value(registry, "hostmesh_agent_probe_rate_fraction"), 1.0);
  EXPECT_EQ(Value(registry, "hostmesh_agent_shedding_step"), 0);
  EXPECT_EQ(Labelled(registry, "hostmesh_agent_shedding_changes_total", "up"), 3);

  const std::uint64_t one = 1;
  ASSERT_EQ(::write(stop, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  ASSERT_EQ(run.wait_for(5s), std::future_status::ready);
  run.get();
  ::close(stop);
}

TEST(agent_app, ProbesWithoutAnAnalyzerAndStopsOnTheStopFd) {
  const SystemClock clock;
  metrics::Registry registry;
  AgentAppOptions options = FakeWiring();
  AgentApp app(ParseAgentConfig(kConfig, "agent.yaml"), options, clock, registry);
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  EXPECT_NE(app.boot_id(), 0U);

  const int stop = ::eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(stop, 0);
  auto run = std::async(std::launch::async, [&] { return app.Run(stop); });
  // Until it has probed a while (3 NICs x 100/s: about 0.3 s on an idle
  // machine, longer when the loop waits for a CPU), not a fixed time.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (Value(registry, "hostmesh_agent_probes_sent_total") <= 30 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);  // polling period
  }
  const std::uint64_t one = 1;
  ASSERT_EQ(::write(stop, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  ASSERT_EQ(run.wait_for(5s), std::future_status::ready) << "Run did not return after stop";
  EXPECT_FALSE(run.get()) << "nothing can be acknowledged by a silent analyzer";
  ::close(stop);

  const double sent = Value(registry, "hostmesh_agent_probes_sent_total");
  EXPECT_GT(sent, 30);
  EXPECT_EQ(Value(registry, "hostmesh_agent_probes_received_total"), sent);
  EXPECT_EQ(Value(registry, "hostmesh_agent_probes_timeouts_total"), 0);
  EXPECT_EQ(Value(registry, "hostmesh_agent_probes_pending"), 0);
  // Shutdown's refused sends are not reported as a full queue.
  EXPECT_EQ(Value(registry, "hostmesh_agent_send_retry_later_total"), 0);
  EXPECT_GT(Value(registry, "hostmesh_agent_upload_queue_depth_batches"), 0);
  EXPECT_GT(Value(registry, "hostmesh_agent_port_pool_distinct_ports"), 0);
  // Every result went to the flight recorder too.
  EXPECT_GT(Value(registry, "hostmesh_agent_flight_ring_events"), 0);
  EXPECT_EQ(Value(registry, "hostmesh_agent_flight_captures_requested_total"), 0);
}

}  // namespace
}  // namespace hostmesh::agent::app
