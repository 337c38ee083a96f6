#pragma once

// The agent's configuration file (--config), an operator contract: key names and
// defaults are documented in deploy/agent.example.yaml and change only on purpose.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "agent/protect/rate_governor.h"
#include "agent/telemetry/telemetry_exclude.h"
#include "common/base/logging.h"
#include "common/config/http_server_config.h"
#include "common/config/value_types.h"
#include "common/net/roce.h"
#include "common/tls/tls_files.h"

namespace hostmesh::agent {

enum class Transport {
  kVerbs,  // RDMA UD queue pairs through rdma-core; NIC hardware timestamps
  kUdp,    // kernel UDP sockets bound to each NIC's netdev
  kAuto,   // verbs where the device opens, UDP otherwise
};
std::string_view TransportName(Transport transport);

struct NicConfig {
  std::string name;
  int rail = 0;
  config::IpAddress ip;
  std::string netdev;       // empty when not given
  std::string rdma_device;  // empty when not given
  std::uint8_t rdma_port = 1;
  std::uint8_t gid_index = 3;
};

struct AnalyzerConfig {
  config::Endpoint address;
  // Mutual TLS (analyzer.tls): the CA the analyzer's certificate must chain
  // to, and this agent's client certificate, whose DNS SAN names `host`.
  tls::TlsFiles tls{"/etc/hostmesh/tls/agent.crt", "/etc/hostmesh/tls/agent.key",
                    "/etc/hostmesh/tls/ca.crt"};
  // The name the analyzer's certificate must carry; empty: the address's host.
  std::string server_name;
  bool insecure = false;  // analyzer.insecure: plaintext, no authentication
};

struct MetricsConfig {
  config::Endpoint listen{"0.0.0.0", 9100};  // port 0 asks for an ephemeral port
  // TLS, token and caps of the metrics server. An agent is scraped by one or
  // two Prometheus servers (one kept-alive connection each) and now and then
  // an operator's curl: 64 connections, 8 from one address, leave room for
  // that and bound what a misbehaving client can hold.
  config::HttpServerConfig server{.max_connections = 64, .max_connections_per_peer = 8};
  // Test-only fault hooks (POST /debug/qp-error, /debug/device-error): off in
  // production and in the packaged configs, on in the soft-RoCE harness,
  // whose test forces a QP into the error state no outside tool can reach.
  // Unauthenticated, so served apart from the metrics on a loopback address
  // only (127.0.0.0/8 or ::1; the config refuses any other).
  bool debug_hooks = false;
  config::Endpoint debug_hooks_listen{"127.0.0.1", 9101};
};

struct ProbeConfig {
  std::chrono::nanoseconds interval = std::chrono::milliseconds{100};
  std::chrono::nanoseconds timeout = std::chrono::milliseconds{500};
  std::uint32_t payload_bytes = 50;
  std::uint16_t dst_port = net::kRoceV2Port;
  std::uint8_t hop_limit = 64;
  // The RoCE lossless class most fabrics run (DSCP 26, ECN-capable: 26 << 2 | 2),
  // so probes share the queue, PFC and ECN marking of the RDMA traffic they watch.
  std::uint8_t traffic_class = 106;
  std::uint8_t service_level = 3;  // verbs AH SL (the VLAN priority, PFC priority 3)
};

struct PortPoolConfig {
  std::uint32_t pool_size = 16;
  std::chrono::nanoseconds rotation_period = std::chrono::seconds{60};
  double rotation_fraction = 0.25;
  std::uint16_t min = 49152;
  std::uint16_t max = 65535;
};

struct TracerouteConfig {
  bool enabled = true;
  // Defaults sized for 8 NICs x 16 ports (896 5-tuples, about 4 probes each):
  // a full refresh every 240 s plus the traces of rotated-in ports need about
  // 30 probes/s in all and under 4/s toward any one first-hop switch.
  double rate_per_second = 40;
  double per_switch_rate_per_second = 5;
  int max_ttl = 8;
  std::chrono::nanoseconds refresh_period = std::chrono::seconds{240};
  // A 5-tuple that lost a probe is traced again this long after its last
  // trace at the soonest, ahead of refreshes (0: never brought forward).
  std::chrono::nanoseconds loss_retrace_after = std::chrono::seconds{30};
};

struct UploadConfig {
  std::uint32_t batch_max_results = 1000;
  std::chrono::nanoseconds batch_max_age = std::chrono::seconds{1};
  config::ByteSize buffer_budget = config::MiB(64);
  std::chrono::nanoseconds backoff_initial = std::chrono::milliseconds{200};
  std::chrono::nanoseconds backoff_max = std::chrono::seconds{30};
  // How long a connection attempt (TCP, TLS handshake, Hello) may take. After
  // an analyzer restart the whole fleet's handshakes queue at the analyzer: a
  // short deadline makes agents give up on handshakes already under way and
  // start them again (bench/reconnect_stampede: 1,000 agents took 126 s and
  // 11,896 failed attempts with 5 s, 4.8 s and none with 60 s). An analyzer
  // that is down refuses the TCP connection at once whatever this is.
  std::chrono::nanoseconds hello_timeout = std::chrono::seconds{60};
};

// NIC and host counters (sysfs, ethtool), sampled on their own period,
// exported on /metrics and uploaded as deltas.
struct TelemetryConfig {
  bool enabled = true;
  std::chrono::nanoseconds period = std::chrono::seconds{10};
  std::string sysfs_root = "/sys";  // tests point it at a fake tree
  bool ethtool = true;              // driver statistics through SIOCETHTOOL
  bool upload = true;               // deltas to the analyzer in the batches
  // PFC priorities with pause-frame series on /metrics (2 series per NIC
  // each); the upload carries every priority the driver counts. 3 is the
  // usual RoCE lossless class.
  std::vector<std::uint32_t> pause_priorities = {3};
  // Devices and counters never read (agent/telemetry/telemetry_exclude.h has
  // the syntax): for firmware that logs an access error per read. Each
  // device named is some NIC's netdev or rdma_device; probes are unaffected.
  std::vector<telemetry::ExcludeRule> exclude;
};

// Self-protection (docs/agent.md#self-protection): under host pressure the
// probe rate steps down to a fraction of probe.interval's, never to zero.
struct ProtectConfig {
  bool enabled = true;
  std::string root = "/";  // where proc/ and sys/fs/cgroup are; tests point it at a fake tree
  std::chrono::nanoseconds sample_every = std::chrono::seconds{2};
  // Which signals count (protect::kSignalNames): the host's PSI ("cpu",
  // "memory"), the agent's cgroup's ("cgroup_cpu", "cgroup_memory"), its
  // CPU limit ("cgroup_throttled") and its own threads' wait for a CPU
  // ("self_cpu_wait"). Where several emulated hosts share one machine (the
  // testbed), only the agent's own wait is its host's.
  std::vector<std::string> signals{protect::kSignalNames.begin(), protect::kSignalNames.end()};
  protect::GovernorOptions governor;
};

// The flight recorder (docs/agent.md#flight-recorder): a ring of the last
// minutes, sent to the analyzer when an incident involves the host, and
// written to a file on SIGUSR2.
struct RecorderConfig {
  // The ring's memory, taken at start. 256 KiB holds about 2.5 minutes of
  // an 8-NIC host probing at 10/s per NIC (20 bytes a probe result), and
  // keeps the agent within its 2.5 MB of private memory.
  config::ByteSize bytes = config::KiB(256);
  // How far back a local capture (SIGUSR2) goes.
  std::chrono::nanoseconds window = std::chrono::minutes{5};
  // Where local captures are written (flight-<UTC time>.jsonl); the Debian
  // unit's StateDirectory=.
  std::string state_dir = "/var/lib/hostmesh-agent";
  // Local capture files kept (the oldest removed first).
  std::uint32_t keep_files = 10;
  // Captures the analyzer may ask for per minute (after a burst of as many).
  double captures_per_minute = 4;
};

struct AgentConfig {
  std::string host;
  std::string agent_id;  // the host name unless set
  LogLevel log_level = LogLevel::kInfo;
  Transport transport = Transport::kAuto;
  AnalyzerConfig analyzer;
  MetricsConfig metrics;
  ProbeConfig probe;
  PortPoolConfig ports;
  TracerouteConfig traceroute;
  UploadConfig upload;
  TelemetryConfig telemetry;
  RecorderConfig recorder;
  ProtectConfig protect;
  std::vector<NicConfig> nics;
};

// Both throw config::ConfigError listing every problem, each with key path and line.
AgentConfig LoadAgentConfig(const std::filesystem::path& path);
AgentConfig ParseAgentConfig(std::string_view text, std::string_view source_name);

}  // namespace hostmesh::agent
