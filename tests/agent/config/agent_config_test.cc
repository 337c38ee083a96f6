// Suite names are lowercase so `ctest -R config` selects them.
#include "agent/config/agent_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/config/config_error.h"

namespace hostmesh::agent {
namespace {

using namespace std::chrono_literals;
using config::ConfigError;
using config::ConfigIssue;
using ::testing::HasSubstr;

// A valid file to which each test adds or changes a few lines.
constexpr const char* kMinimal = R"(host: h003
analyzer:
  address: 198.19.128.1:50051
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.7, netdev: nic0}
  - {name: nic1, rail: 1, ip: 198.18.0.23, netdev: nic1}
)";

std::vector<ConfigIssue> IssuesOf(const std::string& yaml) {
  try {
    ParseAgentConfig(yaml, "agent.yaml");
  } catch (const ConfigError& e) {
    return e.issues();
  }
  return {};
}

// The single issue of `yaml`; fails the test if there is not exactly one.
ConfigIssue OnlyIssue(const std::string& yaml) {
  const std::vector<ConfigIssue> issues = IssuesOf(yaml);
  if (issues.size() != 1) {
    ADD_FAILURE() << "expected exactly one issue, got " << issues.size();
    for (const ConfigIssue& issue : issues) ADD_FAILURE() << issue.ToString();
  }
  return issues.empty() ? ConfigIssue{} : issues[0];
}

TEST(agent_config, MinimalFileGetsEveryDefault) {
  const AgentConfig cfg = ParseAgentConfig(kMinimal, "agent.yaml");
  EXPECT_EQ(cfg.host, "h003");
  EXPECT_EQ(cfg.agent_id, "h003");
  EXPECT_EQ(cfg.log_level, LogLevel::kInfo);
  EXPECT_EQ(cfg.transport, Transport::kAuto);
  EXPECT_EQ(cfg.analyzer.address, (config::Endpoint{"198.19.128.1", 50051}));
  EXPECT_EQ(cfg.metrics.listen, (config::Endpoint{"0.0.0.0", 9100}));
  EXPECT_FALSE(cfg.metrics.debug_hooks);
  EXPECT_EQ(cfg.metrics.debug_hooks_listen, (config::Endpoint{"127.0.0.1", 9101}));
  EXPECT_FALSE(cfg.metrics.server.tls());
  EXPECT_EQ(cfg.metrics.server.tls_client_ca, "");
  EXPECT_EQ(cfg.metrics.server.bearer_token_file, "");
  EXPECT_FALSE(cfg.metrics.server.protect_metrics);
  EXPECT_EQ(cfg.metrics.server.max_connections, 64u);
  EXPECT_EQ(cfg.metrics.server.max_connections_per_peer, 8u);
  EXPECT_EQ(cfg.metrics.server.timeout, 10s);
  EXPECT_EQ(cfg.probe.interval, 100ms);
  EXPECT_EQ(cfg.probe.timeout, 500ms);
  EXPECT_EQ(cfg.probe.payload_bytes, 50u);
  EXPECT_EQ(cfg.probe.dst_port, 4791);
  EXPECT_EQ(cfg.probe.hop_limit, 64);
  EXPECT_EQ(cfg.probe.traffic_class, 106);  // DSCP 26 + ECT(0): the RoCE class
  EXPECT_EQ(cfg.probe.service_level, 3);
  EXPECT_EQ(cfg.ports.pool_size, 16u);
  EXPECT_EQ(cfg.ports.rotation_period, 60s);
  EXPECT_EQ(cfg.ports.rotation_fraction, 0.25);
  EXPECT_EQ(cfg.ports.min, 49152);
  EXPECT_EQ(cfg.ports.max, 65535);
  EXPECT_TRUE(cfg.traceroute.enabled);
  EXPECT_EQ(cfg.traceroute.rate_per_second, 40.0);
  EXPECT_EQ(cfg.traceroute.per_switch_rate_per_second, 5.0);
  EXPECT_EQ(cfg.traceroute.max_ttl, 8);
  EXPECT_EQ(cfg.traceroute.refresh_period, 240s);
  EXPECT_EQ(cfg.traceroute.loss_retrace_after, 30s);
  EXPECT_EQ(cfg.upload.batch_max_results, 1000u);
  EXPECT_EQ(cfg.upload.batch_max_age, 1s);
  EXPECT_EQ(cfg.upload.buffer_budget, config::MiB(64));
  EXPECT_EQ(cfg.upload.backoff_initial, 200ms);
  EXPECT_EQ(cfg.upload.backoff_max, 30s);
  EXPECT_EQ(cfg.upload.hello_timeout, 60s);
  EXPECT_TRUE(cfg.telemetry.enabled);
  EXPECT_EQ(cfg.telemetry.period, 10s);
  EXPECT_EQ(cfg.telemetry.sysfs_root, "/sys");
  EXPECT_TRUE(cfg.telemetry.ethtool);
  EXPECT_TRUE(cfg.telemetry.upload);
  EXPECT_EQ(cfg.telemetry.pause_priorities, (std::vector<std::uint32_t>{3}));
  ASSERT_EQ(cfg.nics.size(), 2u);
  EXPECT_EQ(cfg.nics[0].name, "nic0");
  EXPECT_EQ(cfg.nics[0].rail, 0);
  EXPECT_EQ(cfg.nics[0].ip.ToString(), "198.18.0.7");
  EXPECT_EQ(cfg.nics[0].netdev, "nic0");
  EXPECT_EQ(cfg.nics[0].rdma_device, "");
  EXPECT_EQ(cfg.nics[0].rdma_port, 1);
  EXPECT_EQ(cfg.nics[0].gid_index, 3);
  EXPECT_EQ(cfg.nics[1].rail, 1);
}

TEST(agent_config, FullFileSetsEveryField) {
  const AgentConfig cfg = ParseAgentConfig(R"(
host: h007
agent_id: h007-a
log_level: debug
transport: verbs
analyzer:
  address: "[fd00::1]:50052"
metrics:
  listen: 127.0.0.1:0
  debug_hooks: true
probe:
  interval: 20ms
  timeout: 1.5s
  payload_bytes: 4096
  dst_port: 4792
  hop_limit: 32
  traffic_class: 0
  service_level: 5
ports:
  pool_size: 4
  rotation_period: 5m
  rotation_fraction: 1
  min: 60000
  max: 60003
traceroute:
  enabled: false
  rate_per_second: 0.5
  per_switch_rate_per_second: 1000
  max_ttl: 32
  refresh_period: 1h
  loss_retrace_after: 0s
upload:
  batch_max_results: 20000
  batch_max_age: 250ms
  buffer_budget: 1GiB
  backoff_initial: 1s
  backoff_max: 1s
  hello_timeout: 10s
telemetry:
  enabled: false
  period: 1m
  sysfs_root: /tmp/fake-sys
  ethtool: false
  upload: false
  pause_priorities: [0, 7, 3]
nics:
  - name: rnic-a
    rail: 7
    ip: fd00:18::1
    rdma_device: mlx5_7
    rdma_port: 2
    gid_index: 0
  - name: rnic-b
    rail: 255
    ip: fd00:18::2
    netdev: ens1f1np1
    rdma_device: mlx5_255
)",
                                           "full.yaml");
  EXPECT_EQ(cfg.host, "h007");
  EXPECT_EQ(cfg.agent_id, "h007-a");
  EXPECT_EQ(cfg.log_level, LogLevel::kDebug);
  EXPECT_EQ(cfg.transport, Transport::kVerbs);
  EXPECT_EQ(cfg.analyzer.address, (config::Endpoint{"fd00::1", 50052}));
  EXPECT_EQ(cfg.metrics.listen, (config::Endpoint{"127.0.0.1", 0}));
  EXPECT_TRUE(cfg.metrics.debug_hooks);
  EXPECT_EQ(cfg.probe.interval, 20ms);
  EXPECT_EQ(cfg.probe.timeout, 1500ms);
  EXPECT_EQ(cfg.probe.payload_bytes, 4096u);
  EXPECT_EQ(cfg.probe.dst_port, 4792);
  EXPECT_EQ(cfg.probe.hop_limit, 32);
  EXPECT_EQ(cfg.probe.traffic_class, 0);
  EXPECT_EQ(cfg.probe.service_level, 5);
  EXPECT_EQ(cfg.ports.pool_size, 4u);
  EXPECT_EQ(cfg.ports.rotation_period, 5min);
  EXPECT_EQ(cfg.ports.rotation_fraction, 1.0);
  EXPECT_EQ(cfg.ports.min, 60000);
  EXPECT_EQ(cfg.ports.max, 60003);
  EXPECT_FALSE(cfg.traceroute.enabled);
  EXPECT_EQ(cfg.traceroute.rate_per_second, 0.5);
  EXPECT_EQ(cfg.traceroute.per_switch_rate_per_second, 1000.0);
  EXPECT_EQ(cfg.traceroute.max_ttl, 32);
  EXPECT_EQ(cfg.traceroute.refresh_period, 1h);
  EXPECT_EQ(cfg.traceroute.loss_retrace_after, 0s);
  EXPECT_EQ(cfg.upload.batch_max_results, 20000u);
  EXPECT_EQ(cfg.upload.batch_max_age, 250ms);
  EXPECT_EQ(cfg.upload.buffer_budget, config::GiB(1));
  EXPECT_EQ(cfg.upload.backoff_initial, 1s);
  EXPECT_EQ(cfg.upload.backoff_max, 1s);
  EXPECT_EQ(cfg.upload.hello_timeout, 10s);
  EXPECT_FALSE(cfg.telemetry.enabled);
  EXPECT_EQ(cfg.telemetry.period, 1min);
  EXPECT_EQ(cfg.telemetry.sysfs_root, "/tmp/fake-sys");
  EXPECT_FALSE(cfg.telemetry.ethtool);
  EXPECT_FALSE(cfg.telemetry.upload);
  EXPECT_EQ(cfg.telemetry.pause_priorities, (std::vector<std::uint32_t>{0, 7, 3}));
  ASSERT_EQ(cfg.nics.size(), 2u);
  EXPECT_EQ(cfg.nics[0].name, "rnic-a");
  EXPECT_EQ(cfg.nics[0].rail, 7);
  EXPECT_EQ(cfg.nics[0].ip.ToString(), "fd00:18::1");
  EXPECT_EQ(cfg.nics[0].netdev, "");
  EXPECT_EQ(cfg.nics[0].rdma_device, "mlx5_7");
  EXPECT_EQ(cfg.nics[0].rdma_port, 2);
  EXPECT_EQ(cfg.nics[0].gid_index, 0);
  EXPECT_EQ(cfg.nics[1].rail, 255);
  EXPECT_EQ(cfg.nics[1].netdev, "ens1f1np1");
}

TEST(agent_config, ExampleFileLoadsCleanly) {
  AgentConfig cfg;
  try {
    cfg = LoadAgentConfig(HOSTMESH_AGENT_EXAMPLE);
  } catch (const ConfigError& e) {
    FAIL() << e.what();
  }
  EXPECT_EQ(cfg.host, "h003");
  EXPECT_EQ(cfg.nics.size(), 4u);
  EXPECT_EQ(cfg.analyzer.address.ToString(), "198.19.128.1:50051");
}

TEST(agent_config, EveryLogLevelAndTransportName) {
  for (std::string_view name : LogLevelNames()) {
    const AgentConfig cfg =
        ParseAgentConfig(std::string(kMinimal) + "log_level: " + std::string(name) + "\n", "x");
    EXPECT_EQ(LogLevelName(cfg.log_level), name);
  }
  for (std::string_view name : {"verbs", "udp", "auto"}) {
    const AgentConfig cfg = ParseAgentConfig(
        "host: h003\n"
        "analyzer: {address: 198.19.128.1:50051}\n"
        "nics:\n"
        "  - {name: a, rail: 0, ip: 10.0.0.1, netdev: a, rdma_device: mlx5_0}\n"
        "  - {name: b, rail: 1, ip: 10.0.0.2, netdev: b, rdma_device: mlx5_1}\n"
        "transport: " +
            std::string(name) + "\n",
        "x");
    EXPECT_EQ(TransportName(cfg.transport), name);
  }
}

TEST(agent_config, BadValuesNameKeyAndLine) {
  ConfigIssue issue = OnlyIssue(std::string(kMinimal) + "log_level: verbose\n");
  EXPECT_EQ(issue.path, "log_level");
  EXPECT_EQ(issue.line, 7);
  EXPECT_EQ(issue.message,
            "must be one of \"trace\", \"debug\", \"info\", \"warn\", \"error\", \"critical\", "
            "\"off\", got \"verbose\"");

  issue = OnlyIssue(std::string(kMinimal) + "transport: rdma\n");
  EXPECT_EQ(issue.path, "transport");
  EXPECT_THAT(issue.message, HasSubstr("\"verbs\", \"udp\", \"auto\""));

  issue = OnlyIssue(std::string(kMinimal) + "probe:\n  interval: 0ms\n");
  EXPECT_EQ(issue.ToString(),
            "agent.yaml:8:13: probe.interval: must be between 1ms and 60s, got \"0ms\"");

  issue = OnlyIssue(std::string(kMinimal) + "probe:\n  payload_bytes: 39\n");
  EXPECT_EQ(issue.ToString(),
            "agent.yaml:8:18: probe.payload_bytes: must be between 40 and 4096, got \"39\"");

  issue = OnlyIssue(std::string(kMinimal) + "traceroute:\n  rate_per_second: 0\n");
  EXPECT_EQ(issue.path, "traceroute.rate_per_second");
  EXPECT_EQ(issue.message, "must be greater than 0 and at most 1000, got \"0\"");

  // The tracer's tags and the path resolver stop at 32 hops: more is refused,
  // not clamped without a word.
  issue = OnlyIssue(std::string(kMinimal) + "traceroute:\n  max_ttl: 33\n");
  EXPECT_EQ(issue.path, "traceroute.max_ttl");
  EXPECT_EQ(issue.message, "must be between 1 and 32, got \"33\"");

  // The analyzer refuses a batch of more than 20,000 results: an agent asking
  // for bigger batches would lose them.
  issue = OnlyIssue(std::string(kMinimal) + "upload:\n  batch_max_results: 20001\n");
  EXPECT_EQ(issue.path, "upload.batch_max_results");
  EXPECT_EQ(issue.message, "must be between 1 and 20000, got \"20001\"");

  issue = OnlyIssue(std::string(kMinimal) + "upload:\n  buffer_budget: 32GiB\n");
  EXPECT_EQ(issue.path, "upload.buffer_budget");
  EXPECT_EQ(issue.message, "must be between 1MiB and 16GiB, got \"32GiB\"");

  issue = OnlyIssue(std::string(kMinimal) + "ports:\n  rotation_perod: 5s\n");
  EXPECT_EQ(issue.path, "ports.rotation_perod");
  EXPECT_EQ(issue.message, "unknown key; did you mean \"rotation_period\"?");
}

TEST(agent_config, MetricsServerKeysAreRead) {
  const AgentConfig cfg = ParseAgentConfig(std::string(kMinimal) + R"(metrics:
  listen: 10.0.0.5:9109
  tls: {cert: /etc/hm/tls.crt, key: /etc/hm/tls.key, client_ca: /etc/hm/ca.pem}
  bearer_token_file: /etc/hm/token
  protect_metrics: true
  max_connections: 100
  max_connections_per_peer: 4
  timeout: 3s
)",
                                           "agent.yaml");
  const config::HttpServerConfig& s = cfg.metrics.server;
  EXPECT_EQ(cfg.metrics.listen, (config::Endpoint{"10.0.0.5", 9109}));
  EXPECT_TRUE(s.tls());
  EXPECT_EQ(s.tls_cert, "/etc/hm/tls.crt");
  EXPECT_EQ(s.tls_key, "/etc/hm/tls.key");
  EXPECT_EQ(s.tls_client_ca, "/etc/hm/ca.pem");
  EXPECT_EQ(s.bearer_token_file, "/etc/hm/token");
  EXPECT_TRUE(s.protect_metrics);
  EXPECT_EQ(s.max_connections, 100u);
  EXPECT_EQ(s.max_connections_per_peer, 4u);
  EXPECT_EQ(s.timeout, 3s);
}

TEST(agent_config, MetricsServerErrorsNameKeyAndLine) {
  ConfigIssue issue = OnlyIssue(std::string(kMinimal) + "metrics:\n  tls: {cert: /c.pem}\n");
  EXPECT_EQ(issue.path, "metrics.tls.key");
  EXPECT_EQ(issue.line, 8);
  EXPECT_THAT(issue.message, HasSubstr("missing"));

  issue = OnlyIssue(std::string(kMinimal) + "metrics:\n  max_connections_per_peer: 100\n");
  EXPECT_EQ(issue.ToString(),
            "agent.yaml:8:29: metrics.max_connections_per_peer: must be at most max_connections "
            "(64), got 100");

  issue = OnlyIssue(std::string(kMinimal) + "metrics:\n  protect_metrics: true\n");
  EXPECT_EQ(issue.path, "metrics.protect_metrics");
  EXPECT_THAT(issue.message, HasSubstr("needs bearer_token_file or tls.client_ca"));

  issue = OnlyIssue(std::string(kMinimal) + "metrics:\n  timeout: 10ms\n");
  EXPECT_EQ(issue.ToString(),
            "agent.yaml:8:12: metrics.timeout: must be between 100ms and 10m, got \"10ms\"");

  issue = OnlyIssue(std::string(kMinimal) + "metrics:\n  max_connections: 0\n");
  EXPECT_EQ(issue.path, "metrics.max_connections");

  issue =
      OnlyIssue(std::string(kMinimal) + "metrics:\n  tls: {cert: /c, key: /k, clientca: /ca}\n");
  EXPECT_EQ(issue.path, "metrics.tls.clientca");
  EXPECT_THAT(issue.message, HasSubstr("did you mean \"client_ca\""));
}

TEST(agent_config, DebugHooksListenOnLoopbackOnly) {
  std::string yaml = std::string(kMinimal) + "metrics:\n  debug_hooks: true\n";
  EXPECT_EQ(ParseAgentConfig(yaml + "  debug_hooks_listen: \"[::1]:0\"\n", "agent.yaml")
                .metrics.debug_hooks_listen,
            (config::Endpoint{"::1", 0}));
  EXPECT_EQ(ParseAgentConfig(yaml + "  debug_hooks_listen: 127.0.0.2:9200\n", "agent.yaml")
                .metrics.debug_hooks_listen,
            (config::Endpoint{"127.0.0.2", 9200}));
  for (const char* address : {"0.0.0.0:9101", "10.0.0.5:9101", "localhost:9101", "\"[::]:9101\""}) {
    const ConfigIssue issue = OnlyIssue(yaml + "  debug_hooks_listen: " + address + "\n");
    EXPECT_EQ(issue.path, "metrics.debug_hooks_listen") << address;
    EXPECT_THAT(issue.message, HasSubstr("must be a loopback address")) << address;
  }
}

TEST(agent_config, RecorderDefaultsAndKeys) {
  const AgentConfig defaults = ParseAgentConfig(kMinimal, "x");
  EXPECT_EQ(defaults.recorder.bytes, config::KiB(256));
  EXPECT_EQ(defaults.recorder.window, 5min);
  EXPECT_EQ(defaults.recorder.state_dir, "/var/lib/hostmesh-agent");
  EXPECT_EQ(defaults.recorder.keep_files, 10u);
  const AgentConfig cfg = ParseAgentConfig(std::string(kMinimal) + R"(recorder:
  bytes: 1MiB
  window: 90s
  state_dir: /tmp/hm
  keep_files: 3
  captures_per_minute: 1
)",
                                           "x");
  EXPECT_EQ(cfg.recorder.bytes, config::MiB(1));
  EXPECT_EQ(cfg.recorder.window, 90s);
  EXPECT_EQ(cfg.recorder.state_dir, "/tmp/hm");
  EXPECT_EQ(cfg.recorder.keep_files, 3u);
  EXPECT_EQ(cfg.recorder.captures_per_minute, 1.0);
}

TEST(agent_config, RecorderKeysAreChecked) {
  ConfigIssue issue = OnlyIssue(std::string(kMinimal) + "recorder:\n  bytes: 1KiB\n");
  EXPECT_EQ(issue.path, "recorder.bytes");
  EXPECT_EQ(issue.line, 8);
  EXPECT_THAT(issue.message, HasSubstr("must be between"));
  issue = OnlyIssue(std::string(kMinimal) + "recorder:\n  state_dir: var/lib\n");
  EXPECT_EQ(issue.path, "recorder.state_dir");
  EXPECT_EQ(issue.message, "must be an absolute path, got \"var/lib\"");
  issue = OnlyIssue(std::string(kMinimal) + "recorder:\n  window: 0s\n");
  EXPECT_EQ(issue.path, "recorder.window");
  issue = OnlyIssue(std::string(kMinimal) + "recorder:\n  keep_files: 0\n");
  EXPECT_EQ(issue.path, "recorder.keep_files");
  issue = OnlyIssue(std::string(kMinimal) + "recorder:\n  captures_per_minute: 0\n");
  EXPECT_EQ(issue.path, "recorder.captures_per_minute");
  issue = OnlyIssue(std::string(kMinimal) + "recorder:\n  byte: 1MiB\n");
  EXPECT_EQ(issue.message, "unknown key; did you mean \"bytes\"?");
}

TEST(agent_config, ProtectDefaultsAndKeys) {
  const AgentConfig defaults = ParseAgentConfig(kMinimal, "x");
  EXPECT_TRUE(defaults.protect.enabled);
  EXPECT_EQ(defaults.protect.root, "/");
  EXPECT_EQ(defaults.protect.sample_every, 2s);
  EXPECT_EQ(defaults.protect.signals.size(), 6u);
  EXPECT_EQ(defaults.protect.governor.steps, (std::vector<double>{1, 0.5, 0.25, 0.1}));
  const AgentConfig cfg = ParseAgentConfig(std::string(kMinimal) + R"(protect:
  enabled: false
  root: /tmp/fake
  sample_every: 5s
  signals: [cgroup_throttled]
  steps: [1, 0.3]
  cpu_high_percent: 80
  memory_high_percent: 15
  throttled_high_percent: 70
  calm_share: 0.4
  step_down_every: 10s
  calm_for: 1m
)",
                                           "x");
  EXPECT_FALSE(cfg.protect.enabled);
  EXPECT_EQ(cfg.protect.root, "/tmp/fake");
  EXPECT_EQ(cfg.protect.sample_every, 5s);
  EXPECT_EQ(cfg.protect.signals, (std::vector<std::string>{"cgroup_throttled"}));
  EXPECT_EQ(cfg.protect.governor.steps, (std::vector<double>{1, 0.3}));
  EXPECT_EQ(cfg.protect.governor.cpu_high, 80);
  EXPECT_EQ(cfg.protect.governor.memory_high, 15);
  EXPECT_EQ(cfg.protect.governor.throttled_high, 70);
  EXPECT_EQ(cfg.protect.governor.calm_share, 0.4);
  EXPECT_EQ(cfg.protect.governor.step_down_every, 10s);
  EXPECT_EQ(cfg.protect.governor.calm_for, 1min);
}

TEST(agent_config, ProtectKeysAreChecked) {
  ConfigIssue issue = OnlyIssue(std::string(kMinimal) + "protect:\n  steps: [1, 0.5, 0]\n");
  EXPECT_EQ(issue.path, "protect.steps");
  EXPECT_THAT(issue.message, HasSubstr("steps must be in (0, 1]"));
  issue = OnlyIssue(std::string(kMinimal) + "protect:\n  steps: [0.5, 0.25]\n");
  EXPECT_THAT(issue.message, HasSubstr("steps must start at 1"));
  issue = OnlyIssue(std::string(kMinimal) + "protect:\n  signals: [cpu, disk]\n");
  EXPECT_EQ(issue.path, "protect.signals");
  EXPECT_THAT(issue.message, HasSubstr("unknown signal \"disk\""));
  issue = OnlyIssue(std::string(kMinimal) + "protect:\n  cpu_high_percent: 0\n");
  EXPECT_EQ(issue.path, "protect.cpu_high_percent");
  issue = OnlyIssue(std::string(kMinimal) + "protect:\n  root: proc\n");
  EXPECT_EQ(issue.path, "protect.root");
  issue = OnlyIssue(std::string(kMinimal) + "protect:\n  sample_every: 10ms\n");
  EXPECT_EQ(issue.path, "protect.sample_every");
}

TEST(agent_config, TelemetryKeysAreChecked) {
  ConfigIssue issue = OnlyIssue(std::string(kMinimal) + "telemetry:\n  period: 500ms\n");
  EXPECT_EQ(issue.ToString(),
            "agent.yaml:8:11: telemetry.period: must be between 1s and 1h, got \"500ms\"");
  issue = OnlyIssue(std::string(kMinimal) + "telemetry:\n  sysfs_root: sys\n");
  EXPECT_EQ(issue.path, "telemetry.sysfs_root");
  EXPECT_EQ(issue.line, 8);
  EXPECT_EQ(issue.message, "must be an absolute path, got \"sys\"");
  issue = OnlyIssue(std::string(kMinimal) + "telemetry:\n  pause_priorities: [3, 8]\n");
  EXPECT_EQ(issue.path, "telemetry.pause_priorities");
  EXPECT_EQ(issue.message, "PFC priorities are 0..7, got 8");
  issue = OnlyIssue(std::string(kMinimal) + "telemetry:\n  pause_priorities: [3, 3]\n");
  EXPECT_EQ(issue.message, "priority 3 is listed twice");
  issue = OnlyIssue(std::string(kMinimal) + "telemetry:\n  pause_priorities: three\n");
  EXPECT_EQ(issue.message, "expected a list, got \"three\"");
  issue = OnlyIssue(std::string(kMinimal) + "telemetry:\n  perod: 5s\n");
  EXPECT_EQ(issue.message, "unknown key; did you mean \"period\"?");
  // An empty list is allowed: no per-priority pause series at all.
  const AgentConfig cfg =
      ParseAgentConfig(std::string(kMinimal) + "telemetry:\n  pause_priorities: []\n", "x");
  EXPECT_TRUE(cfg.telemetry.pause_priorities.empty());
}

TEST(agent_config, TelemetryExcludeNamesDevicesAndCountersAndLeavesProbingAlone) {
  const AgentConfig cfg = ParseAgentConfig(R"(host: h003
analyzer:
  address: 198.19.128.1:50051
telemetry:
  exclude:
    - mlx5_0
    - hw_counters/out_of_sequence
    - mlx5_1:hw_counters/np_cnp_sent
    - counters/port_xmit_wait
    - eth2:ethtool/rx_discards_phy
    - ethtool/rx_out_of_buffer
    - eth3:ethtool
    - mlx5_1:pcie
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.7, netdev: eth2, rdma_device: mlx5_0}
  - {name: nic1, rail: 1, ip: 198.18.0.23, netdev: eth3, rdma_device: mlx5_1}
)",
                                           "agent.yaml");
  using telemetry::ExcludeWhat;
  EXPECT_EQ(cfg.telemetry.exclude,
            (std::vector<telemetry::ExcludeRule>{
                {ExcludeWhat::kDevice, "mlx5_0", ""},
                {ExcludeWhat::kPortCounter, "", "hw_counters/out_of_sequence"},
                {ExcludeWhat::kPortCounter, "mlx5_1", "hw_counters/np_cnp_sent"},
                {ExcludeWhat::kPortCounter, "", "counters/port_xmit_wait"},
                {ExcludeWhat::kEthtoolStat, "eth2", "rx_discards_phy"},
                {ExcludeWhat::kEthtoolStat, "", "rx_out_of_buffer"},
                {ExcludeWhat::kEthtool, "eth3", ""},
                {ExcludeWhat::kPcie, "mlx5_1", ""},
            }));
  // Telemetry only: the NICs keep their devices for probing.
  EXPECT_EQ(cfg.nics[0].rdma_device, "mlx5_0");
  EXPECT_EQ(cfg.nics[1].netdev, "eth3");
  EXPECT_TRUE(ParseAgentConfig(kMinimal, "x").telemetry.exclude.empty());
  EXPECT_TRUE(ParseAgentConfig(std::string(kMinimal) + "telemetry:\n  exclude: []\n", "x")
                  .telemetry.exclude.empty());
}

TEST(agent_config, TelemetryExcludeEntriesAreChecked) {
  const auto issue = [](const std::string& exclude) {
    return OnlyIssue(std::string(kMinimal) + "telemetry:\n  exclude: " + exclude + "\n");
  };
  ConfigIssue i = issue("[\"nic0:\"]");
  EXPECT_EQ(i.ToString(),
            "agent.yaml:8:12: telemetry.exclude: entry \"nic0:\": nothing after the device's ':': "
            "expected counters/NAME, hw_counters/NAME, ethtool/NAME, ethtool or pcie");
  EXPECT_EQ(issue("[mlx5_9]").message,
            "entry \"mlx5_9\": mlx5_9 is not the netdev or rdma_device of any NIC");
  EXPECT_EQ(issue("[nic0:hw_counters/out_of_sequence]").message,
            "entry \"nic0:hw_counters/out_of_sequence\": port counters belong to an RDMA device, "
            "and nic0 is not the rdma_device of any NIC");
  EXPECT_EQ(issue("[mlx5_0:ethtool]").message,
            "entry \"mlx5_0:ethtool\": ethtool statistics belong to a netdev, and mlx5_0 is not "
            "the netdev of any NIC");
  EXPECT_EQ(issue("[nic1:pcie/aer_dev_fatal]").message,
            "entry \"nic1:pcie/aer_dev_fatal\": unknown source before '/': expected counters/, "
            "hw_counters/ or ethtool/");
  EXPECT_EQ(issue("[nic0, hw_counters/x, nic0]").message, "entry \"nic0\" is listed twice");
  EXPECT_EQ(issue("nic0").message, "expected a list, got \"nic0\"");
  i = issue("[nic0, \"\"]");
  EXPECT_EQ(i.path, "telemetry.exclude[1]");
  EXPECT_THAT(i.message, HasSubstr("expected a non-empty string"));
  // Every bad entry is reported, not only the first.
  EXPECT_EQ(IssuesOf(std::string(kMinimal) + "telemetry:\n  exclude: [a b, nic0, eth9]\n").size(),
            2U);
}

TEST(agent_config, RequiredKeys) {
  const std::vector<ConfigIssue> issues = IssuesOf("log_level: info\n");
  ASSERT_EQ(issues.size(), 3u);
  EXPECT_EQ(issues[0].path, "host");
  EXPECT_EQ(issues[1].path, "analyzer");
  EXPECT_EQ(issues[2].path, "nics");
  for (const ConfigIssue& issue : issues) EXPECT_EQ(issue.message, "required key is missing");

  const std::vector<ConfigIssue> typo = IssuesOf(R"(host: h003
analyzer:
  adress: 198.19.128.1:50051
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.7, netdev: nic0}
  - {name: nic1, rail: 1, ip: 198.18.0.23, netdev: nic1}
)");
  ASSERT_EQ(typo.size(), 2u);
  EXPECT_EQ(typo[0].ToString(), "agent.yaml:2:1: analyzer.address: required key is missing");
  EXPECT_EQ(typo[1].ToString(),
            "agent.yaml:3:3: analyzer.adress: unknown key; did you mean \"address\"?");
}

TEST(agent_config, AgentIdDefaultsToHost) {
  EXPECT_EQ(ParseAgentConfig(kMinimal, "x").agent_id, "h003");
  EXPECT_EQ(ParseAgentConfig(std::string(kMinimal) + "agent_id: other\n", "x").agent_id, "other");
}

TEST(agent_config, AnalyzerNeedsARealPort) {
  const ConfigIssue issue = OnlyIssue(R"(host: h003
analyzer:
  address: 198.19.128.1:0
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.7, netdev: nic0}
  - {name: nic1, rail: 1, ip: 198.18.0.23, netdev: nic1}
)");
  EXPECT_EQ(issue.ToString(),
            "agent.yaml:3:12: analyzer.address: port must be between 1 and 65535, got 0");
}

TEST(agent_config, PortRangeMustHoldThePool) {
  ConfigIssue issue = OnlyIssue(std::string(kMinimal) + "ports:\n  min: 50000\n  max: 49999\n");
  EXPECT_EQ(issue.ToString(),
            "agent.yaml:9:8: ports.max: must be at least ports.min (50000), got 49999");

  issue = OnlyIssue(std::string(kMinimal) + "ports:\n  min: 50000\n  max: 50009\n");
  EXPECT_EQ(issue.ToString(),
            "agent.yaml:7:1: ports.pool_size: must fit in the 10 source ports between ports.min "
            "and ports.max, got 16");

  issue = OnlyIssue(std::string(kMinimal) + "ports:\n  min: 80\n");
  EXPECT_EQ(issue.path, "ports.min");
  EXPECT_EQ(issue.message, "must be between 1024 and 65535, got \"80\"");

  // One port is a valid (if narrow) range for a pool of one.
  const AgentConfig cfg = ParseAgentConfig(
      std::string(kMinimal) + "ports:\n  pool_size: 1\n  min: 50000\n  max: 50000\n", "x");
  EXPECT_EQ(cfg.ports.min, cfg.ports.max);
}

TEST(agent_config, BackoffMaxIsAtLeastInitial) {
  const ConfigIssue issue =
      OnlyIssue(std::string(kMinimal) + "upload:\n  backoff_initial: 2s\n  backoff_max: 1500ms\n");
  EXPECT_EQ(issue.ToString(),
            "agent.yaml:9:16: upload.backoff_max: must be at least upload.backoff_initial (2s), "
            "got 1500ms");
}

TEST(agent_config, AtLeastTwoNics) {
  ConfigIssue issue = OnlyIssue(R"(host: h003
analyzer: {address: 198.19.128.1:50051}
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.7, netdev: nic0}
)");
  EXPECT_EQ(issue.ToString(),
            "agent.yaml:4:3: nics: must list at least 2 NICs (probes run between the NICs of one "
            "host), got 1");

  issue = OnlyIssue("host: h003\nanalyzer: {address: 198.19.128.1:50051}\nnics: []\n");
  EXPECT_EQ(issue.path, "nics");
  EXPECT_THAT(issue.message, HasSubstr("got 0"));

  // Not a list at all: one issue, not also "at least 2".
  issue = OnlyIssue("host: h003\nanalyzer: {address: 198.19.128.1:50051}\nnics: nic0\n");
  EXPECT_EQ(issue.ToString(), "agent.yaml:3:7: nics: expected a list, got \"nic0\"");
}

TEST(agent_config, NicNamesRailsAndAddressesAreUnique) {
  const std::vector<ConfigIssue> issues = IssuesOf(R"(host: h003
analyzer: {address: 198.19.128.1:50051}
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.7, netdev: nic0}
  - {name: nic1, rail: 1, ip: 198.18.0.23, netdev: nic1}
  - name: nic0
    rail: 1
    ip: 198.18.0.23
    netdev: nic2
)");
  ASSERT_EQ(issues.size(), 3u);
  EXPECT_EQ(issues[0].ToString(),
            "agent.yaml:6:11: nics[2].name: duplicate NIC name \"nic0\" (also nics[0])");
  EXPECT_EQ(issues[1].ToString(), "agent.yaml:7:11: nics[2].rail: duplicate rail 1 (also nics[1])");
  EXPECT_EQ(issues[2].ToString(),
            "agent.yaml:8:9: nics[2].ip: duplicate IP 198.18.0.23 (also nics[1])");
}

TEST(agent_config, SameAddressInTwoSpellingsIsADuplicate) {
  const ConfigIssue issue = OnlyIssue(R"(host: h003
analyzer: {address: 198.19.128.1:50051}
transport: verbs
nics:
  - {name: a, rail: 0, ip: "fd00::1", rdma_device: mlx5_0}
  - {name: b, rail: 1, ip: "fd00:0:0::1", rdma_device: mlx5_1}
)");
  EXPECT_EQ(issue.path, "nics[1].ip");
  EXPECT_EQ(issue.message, "duplicate IP fd00::1 (also nics[0])");
}

TEST(agent_config, TransportDecidesWhichNicKeysAreRequired) {
  // udp needs netdev.
  ConfigIssue issue = OnlyIssue(R"(host: h003
analyzer: {address: 198.19.128.1:50051}
transport: udp
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.7, netdev: nic0}
  - name: nic1
    rail: 1
    ip: 198.18.0.23
    rdma_device: mlx5_1
)");
  EXPECT_EQ(issue.ToString(), "agent.yaml:6:5: nics[1].netdev: required key is missing");

  // verbs needs rdma_device.
  issue = OnlyIssue(R"(host: h003
analyzer: {address: 198.19.128.1:50051}
transport: verbs
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.7, rdma_device: mlx5_0}
  - {name: nic1, rail: 1, ip: 198.18.0.23, netdev: nic1}
)");
  EXPECT_EQ(issue.ToString(), "agent.yaml:6:5: nics[1].rdma_device: required key is missing");

  // auto needs one of the two.
  issue = OnlyIssue(R"(host: h003
analyzer: {address: 198.19.128.1:50051}
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.7, rdma_device: mlx5_0}
  - {name: nic1, rail: 1, ip: 198.18.0.23, netdev: nic1}
  - {name: nic2, rail: 2, ip: 198.18.0.39}
)");
  EXPECT_EQ(issue.ToString(),
            "agent.yaml:6:5: nics[2].rdma_device: transport auto needs rdma_device or netdev (or "
            "both) for each NIC");

  // The transport is read first, so its position in the file does not matter.
  EXPECT_NO_THROW(ParseAgentConfig(R"(host: h003
analyzer: {address: 198.19.128.1:50051}
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.7, rdma_device: mlx5_0}
  - {name: nic1, rail: 1, ip: 198.18.0.23, rdma_device: mlx5_1}
transport: verbs
)",
                                   "x"));
}

TEST(agent_config, NamesFitTheKernelAndCarryNoSpaces) {
  ConfigIssue issue = OnlyIssue(R"(host: h003
analyzer: {address: 198.19.128.1:50051}
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.7, netdev: a-very-long-netdev}
  - {name: nic1, rail: 1, ip: 198.18.0.23, netdev: nic1}
)");
  EXPECT_EQ(issue.path, "nics[0].netdev");
  EXPECT_EQ(issue.message, "must be at most 15 characters, got \"a-very-long-netdev\" (18)");

  issue = OnlyIssue(std::string(kMinimal) + "agent_id: \"h 003\"\n");
  EXPECT_EQ(issue.path, "agent_id");
  EXPECT_EQ(issue.message,
            "must be printable ASCII without spaces or control characters, got \"h 003\"");
}

TEST(agent_config, MissingFile) {
  try {
    LoadAgentConfig("/nonexistent/agent.yaml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/agent.yaml: cannot read the file"));
  }
}

}  // namespace
// Uploads are mutual TLS unless the file opts out in so many words (DESIGN 7).
TEST(agent_config, AnalyzerIsMutualTlsUnlessInsecureIsSaid) {
  const std::string head =
      "host: h003\nnics:\n  - {name: nic0, rail: 0, ip: 198.18.0.7, netdev: nic0}\n"
      "  - {name: nic1, rail: 1, ip: 198.18.0.23, netdev: nic1}\n";
  const AgentConfig packaged =
      ParseAgentConfig(head + "analyzer: {address: 198.19.128.1:50051}\n", "agent.yaml");
  EXPECT_FALSE(packaged.analyzer.insecure);
  EXPECT_EQ(packaged.analyzer.tls.ca, "/etc/hostmesh/tls/ca.crt");
  EXPECT_EQ(packaged.analyzer.tls.cert, "/etc/hostmesh/tls/agent.crt");
  EXPECT_EQ(packaged.analyzer.tls.key, "/etc/hostmesh/tls/agent.key");

  const AgentConfig tls = ParseAgentConfig(head + R"(analyzer:
  address: analyzer.example:50051
  tls: {ca: /etc/hm/ca.crt, cert: /etc/hm/h003.crt, key: /etc/hm/h003.key, server_name: hm-an}
)",
                                           "agent.yaml");
  EXPECT_FALSE(tls.analyzer.insecure);
  EXPECT_EQ(tls.analyzer.tls.ca, "/etc/hm/ca.crt");
  EXPECT_EQ(tls.analyzer.tls.cert, "/etc/hm/h003.crt");
  EXPECT_EQ(tls.analyzer.tls.key, "/etc/hm/h003.key");
  EXPECT_EQ(tls.analyzer.server_name, "hm-an");

  const ConfigIssue issue =
      OnlyIssue(head + "analyzer: {address: 198.19.128.1:50051, insecure: true, tls: {ca: /a}}\n");
  EXPECT_EQ(issue.path, "analyzer.insecure");
  EXPECT_TRUE(
      ParseAgentConfig(head + "analyzer: {address: 198.19.128.1:50051, insecure: true}\n", "x")
          .analyzer.insecure);
}

}  // namespace hostmesh::agent
