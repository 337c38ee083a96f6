// The agent's pure wiring: config -> options, transport choice, and what it
// puts on the wire (results -> hostmesh.v1, the hello).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "agent/upload/wire_messages.h"
#include "agent/wiring/options_from_config.h"

namespace hostmesh::agent::wiring {
namespace {

using upload::BuildHello;
using upload::HelloInputs;
using upload::ToProto;

using namespace std::chrono_literals;

constexpr const char* kConfig = R"(host: h003
transport: auto
analyzer:
  address: 198.19.128.1:50051
  insecure: true
probe:
  interval: 50ms
  timeout: 400ms
  payload_bytes: 64
  dst_port: 4792
ports:
  pool_size: 8
  rotation_period: 30s
  rotation_fraction: 0.5
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.7, netdev: nic0, rdma_device: mlx5_0}
  - {name: nic1, rail: 1, ip: 198.18.0.23, netdev: nic1, rdma_device: mlx5_1}
  - {name: nic2, rail: 2, ip: 198.18.0.39, netdev: nic2}
)";

AgentConfig Config() {
  return ParseAgentConfig(kConfig, "agent.yaml");
}

TEST(agent_wiring, CoreOptionsFollowTheConfig) {
  const CoreOptions core = CoreOptionsFrom(Config());
  EXPECT_EQ(core.scheduler.num_nics, 3U);
  EXPECT_EQ(core.scheduler.interval, 50ms);
  EXPECT_EQ(core.scheduler.coalesce_window, 50ms);  // one wake-up per round
  EXPECT_EQ(core.scheduler.dst_port, 4792);
  EXPECT_EQ(core.scheduler.ports.pool_size, 8U);
  EXPECT_EQ(core.scheduler.ports.rotation_period, 30s);
  EXPECT_DOUBLE_EQ(core.scheduler.ports.rotation_fraction, 0.5);
  EXPECT_EQ(core.scheduler.ports.min_port, 49152);
  EXPECT_EQ(core.scheduler.ports.max_port, 65535);
  EXPECT_EQ(core.tracker.num_nics, 3U);
  EXPECT_EQ(core.tracker.timeout, 400ms);
  EXPECT_EQ(core.tracker.ring_capacity, Tracker::CapacityFor(50ms, 400ms));
}

TEST(agent_wiring, TransportOptionsFollowTheConfig) {
  AgentConfig config = Config();
  const udp::UdpTransportOptions u = UdpOptionsFrom(config);
  ASSERT_EQ(u.nics.size(), 3U);
  EXPECT_EQ(u.nics[2].netdev, "nic2");
  EXPECT_EQ(u.nics[1].ip.ToString(), "198.18.0.23");
  EXPECT_EQ(u.dst_port, 4792);
  EXPECT_GE(u.max_payload_bytes, config.probe.payload_bytes);
  EXPECT_LT(u.max_payload_bytes, 65535U) << "receive slots sized for our own probes";
  const verbs::VerbsTransportOptions v = VerbsOptionsFrom(config);
  ASSERT_EQ(v.nics.size(), 3U);
  EXPECT_EQ(v.nics[0].rdma_device, "mlx5_0");
  EXPECT_EQ(v.nics[0].gid_index, 3);
  EXPECT_GE(v.max_payload_bytes, 64U);
  config.upload.hello_timeout = std::chrono::seconds{7};
  const upload::UploaderOptions up = UploaderOptionsFrom(config);
  EXPECT_EQ(up.analyzer_address, "198.19.128.1:50051");
  EXPECT_EQ(up.engine.upload.batch_max_results, config.upload.batch_max_results);
  EXPECT_EQ(up.engine.upload.hello_timeout, config.upload.hello_timeout);
}

TEST(agent_wiring, AutoPicksVerbsOnlyWhenEveryNicHasItsDevice) {
  AgentConfig config = Config();
  const auto has = [](std::set<std::string> present) {
    return [present](std::string_view name) { return present.contains(std::string(name)); };
  };
  // nic2 has no rdma_device: the whole process runs UDP.
  TransportChoice choice = ChooseTransport(config, has({"mlx5_0", "mlx5_1"}));
  EXPECT_EQ(choice.transport, Transport::kUdp);
  ASSERT_EQ(choice.reasons.size(), 3U);
  EXPECT_NE(choice.reasons[2].find("no rdma_device"), std::string::npos) << choice.reasons[2];

  config.nics[2].rdma_device = "mlx5_2";
  EXPECT_EQ(ChooseTransport(config, has({"mlx5_0", "mlx5_1", "mlx5_2"})).transport,
            Transport::kVerbs);
  choice = ChooseTransport(config, has({"mlx5_0", "mlx5_2"}));
  EXPECT_EQ(choice.transport, Transport::kUdp);
  EXPECT_NE(choice.reasons[1].find("mlx5_1 not found"), std::string::npos) << choice.reasons[1];
  EXPECT_EQ(ChooseTransport(config, has({})).transport, Transport::kUdp);

  config.transport = Transport::kVerbs;  // explicit choices are not second-guessed
  EXPECT_EQ(ChooseTransport(config, has({})).transport, Transport::kVerbs);
}

TEST(agent_wiring, CheckWiringNamesTheMissingKey) {
  AgentConfig config = Config();
  EXPECT_TRUE(CheckWiring(config, Transport::kUdp).empty());
  const auto problems = CheckWiring(config, Transport::kVerbs);
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].rfind("nics[2].rdma_device", 0), 0U) << problems[0];
  config.nics[1].netdev.clear();
  ASSERT_EQ(CheckWiring(config, Transport::kUdp).size(), 1U);
  EXPECT_EQ(CheckWiring(config, Transport::kUdp)[0].rfind("nics[1].netdev", 0), 0U);
}

TEST(agent_wiring, ResultConvertsFieldForField) {
  ProbeResult r;
  r.src_nic = 1;
  r.dst_nic = 2;
  r.src_port = 50000;
  r.dst_port = 4791;
  r.sequence = 77;
  r.send_time_ns = 1'700'000'000'000'000'000;
  r.app_send_ns = r.send_time_ns + 1000;
  r.nic_send_ns = r.send_time_ns + 3000;
  r.nic_recv_ns = r.send_time_ns + 13000;
  r.app_recv_ns = r.send_time_ns + 20000;
  r.send_timestamp_source = TimestampSource::kKernel;
  r.recv_timestamp_source = TimestampSource::kHardware;
  r.payload_bytes = 50;
  r.timestamp_error_ns = 42;
  const v1::ProbeResult p = ToProto(r);
  EXPECT_EQ(p.src_nic(), 1U);
  EXPECT_EQ(p.dst_nic(), 2U);
  EXPECT_EQ(p.src_port(), 50000U);
  EXPECT_EQ(p.dst_port(), 4791U);
  EXPECT_EQ(p.sequence(), 77U);
  EXPECT_EQ(p.send_time_ns(), r.send_time_ns);
  EXPECT_EQ(p.app_send_ns(), r.app_send_ns);
  EXPECT_EQ(p.nic_send_ns(), r.nic_send_ns);
  EXPECT_EQ(p.nic_recv_ns(), r.nic_recv_ns);
  EXPECT_EQ(p.app_recv_ns(), r.app_recv_ns);
  EXPECT_EQ(p.send_timestamp_source(), v1::TIMESTAMP_SOURCE_KERNEL);
  EXPECT_EQ(p.recv_timestamp_source(), v1::TIMESTAMP_SOURCE_HARDWARE);
  EXPECT_FALSE(p.timeout());
  EXPECT_EQ(p.payload_bytes(), 50U);
  EXPECT_EQ(p.timestamp_error_ns(), 42);

  double seconds = 0;
  ASSERT_TRUE(NetworkLatencySeconds(r, &seconds));
  EXPECT_NEAR(seconds, 10e-6, 1e-12);
  ASSERT_TRUE(ProcessingDelaySeconds(r, &seconds));
  EXPECT_NEAR(seconds, 19e-6 - 10e-6, 1e-12);
  EXPECT_FALSE(p.send_failed());
  r.timeout = true;
  EXPECT_TRUE(ToProto(r).timeout());
  r.timeout = false;
  r.send_failed = true;
  EXPECT_TRUE(ToProto(r).send_failed());
  EXPECT_FALSE(ToProto(r).timeout());
  r.send_failed = false;
  r.timeout = true;
  EXPECT_FALSE(NetworkLatencySeconds(r, &seconds));
  r.timeout = false;
  r.nic_send_ns = 0;  // (2) never came: no latency, no processing delay
  EXPECT_FALSE(NetworkLatencySeconds(r, &seconds));
  EXPECT_FALSE(ProcessingDelaySeconds(r, &seconds));
}

TEST(agent_wiring, HelloDescribesEveryNic) {
  HelloInputs in;
  in.boot_id = 0xB007;
  in.transport = Transport::kUdp;
  in.capabilities = {{TimestampSource::kKernel, TimestampSource::kKernel},
                     {TimestampSource::kKernel, TimestampSource::kHardware},
                     {TimestampSource::kUser, TimestampSource::kUser}};
  in.agent_version = "0.1.0";
  in.start_time_ns = 123;
  const v1::AgentHello hello = BuildHello(Config(), in);
  EXPECT_EQ(hello.schema_version(), v1::SCHEMA_VERSION_1);
  EXPECT_EQ(hello.agent_id(), "h003");
  EXPECT_EQ(hello.host(), "h003");
  EXPECT_EQ(hello.boot_id(), 0xB007U);
  EXPECT_EQ(hello.agent_version(), "0.1.0");
  EXPECT_EQ(hello.start_time_ns(), 123);
  ASSERT_EQ(hello.nics_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(hello.nics(i).id(), static_cast<std::uint32_t>(i));
    EXPECT_EQ(hello.nics(i).rail(), static_cast<std::uint32_t>(i));
    EXPECT_EQ(hello.nics(i).transport(), v1::TRANSPORT_UDP);
    EXPECT_EQ(hello.nics(i).rdma_device(), "");  // UDP: the device is not used
  }
  EXPECT_EQ(hello.nics(1).ip(), "198.18.0.23");
  EXPECT_EQ(hello.nics(1).netdev(), "nic1");
  EXPECT_EQ(hello.nics(1).timestamp_source(), v1::TIMESTAMP_SOURCE_KERNEL);  // the weaker
  EXPECT_EQ(hello.nics(2).timestamp_source(), v1::TIMESTAMP_SOURCE_USER);
  EXPECT_EQ(hello.capabilities().best_timestamp_source(), v1::TIMESTAMP_SOURCE_KERNEL);
  EXPECT_FALSE(hello.capabilities().hardware_timestamps());
  ASSERT_EQ(hello.capabilities().transports_size(), 1);
  EXPECT_EQ(hello.capabilities().transports(0), v1::TRANSPORT_UDP);

  in.transport = Transport::kVerbs;
  const v1::AgentHello verbs = BuildHello(Config(), in);
  EXPECT_EQ(verbs.nics(0).rdma_device(), "mlx5_0");
  EXPECT_EQ(verbs.nics(0).transport(), v1::TRANSPORT_VERBS);
}

TEST(agent_wiring, SummaryIsOneLine) {
  const std::string summary = ConfigSummary(Config());
  EXPECT_EQ(summary.find('\n'), std::string::npos);
  EXPECT_NE(summary.find("3 NICs"), std::string::npos) << summary;
  EXPECT_NE(summary.find("transport auto"), std::string::npos) << summary;
}

}  // namespace
}  // namespace hostmesh::agent::wiring
