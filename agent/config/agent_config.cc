#include "agent/config/agent_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "common/base/names.h"
#include "common/base/upload_limits.h"
#include "common/config/log_level_names.h"
#include "common/config/map_reader.h"
#include "common/config/yaml_loader.h"
#include "common/net/ttl.h"

namespace hostmesh::agent {
namespace {

using namespace std::chrono_literals;

// 127.0.0.0/8 or ::1, as text ("localhost" is a name a resolver may map
// elsewhere: refused).
bool IsLoopback(const std::string& host) {
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}
using config::EnumName;
using config::kLogLevelNames;
using config::LowerBound;
using config::MapReader;
using config::Range;

constexpr std::array<EnumName<Transport>, 3> kTransportNames = {{
    {"verbs", Transport::kVerbs},
    {"udp", Transport::kUdp},
    {"auto", Transport::kAuto},
}};

// Linux limits: IFNAMSIZ - 1 for interface names, IBV_SYSFS_NAME_MAX - 1 for RDMA devices.
constexpr size_t kMaxNetdevName = 15;
constexpr size_t kMaxRdmaDeviceName = 63;
constexpr size_t kMaxName = kMaxNameBytes;

// Names end up in metric labels, file names and wire messages: the one rule
// the analyzer's ingest also applies (common/base/names.h).
void CheckName(MapReader& r, std::string_view key, const std::string& value, size_t max_length) {
  if (auto why = hostmesh::CheckName(value, max_length)) r.Fail(key, *why);
}

void ReadProbe(MapReader& r, ProbeConfig& probe) {
  r.Optional("interval", &probe.interval, Range{1ms, 60s});
  r.Optional("timeout", &probe.timeout, Range{1ms, 60s});
  // The probe codec's header (magic, version, sequence, timestamps) needs 40 bytes.
  r.Optional("payload_bytes", &probe.payload_bytes, {40, 4096});
  r.Optional("dst_port", &probe.dst_port, {1, 65535});
  r.Optional("hop_limit", &probe.hop_limit, {1, 255});
  r.Optional("traffic_class", &probe.traffic_class, {0, 255});
  r.Optional("service_level", &probe.service_level, {0, 15});
}

void ReadPorts(MapReader& r, PortPoolConfig& ports) {
  r.Optional("pool_size", &ports.pool_size, {1, 4096});
  r.Optional("rotation_period", &ports.rotation_period, Range{1s, 24h});
  r.Optional("rotation_fraction", &ports.rotation_fraction, {0.0, 1.0});
  // Below 1024 are privileged, well-known ports; probes must not pose as them.
  const bool min_ok = r.Optional("min", &ports.min, {1024, 65535});
  const bool max_ok = r.Optional("max", &ports.max, {1024, 65535});
  if (!min_ok || !max_ok) return;  // a bad bound was reported already
  if (ports.max < ports.min) {
    r.Fail("max", "must be at least ports.min (" + std::to_string(ports.min) + "), got " +
                      std::to_string(ports.max));
    return;
  }
  const std::uint32_t available = static_cast<std::uint32_t>(ports.max - ports.min) + 1;
  if (ports.pool_size > available) {
    r.Fail("pool_size", "must fit in the " + std::to_string(available) +
                            " source ports between ports.min and ports.max, got " +
                            std::to_string(ports.pool_size));
  }
}

void ReadTraceroute(MapReader& r, TracerouteConfig& traceroute) {
  r.Optional("enabled", &traceroute.enabled);
  r.Optional("rate_per_second", &traceroute.rate_per_second,
             Range{0.0, 1000.0, LowerBound::kExclusive});
  r.Optional("per_switch_rate_per_second", &traceroute.per_switch_rate_per_second,
             Range{0.0, 1000.0, LowerBound::kExclusive});
  r.Optional("max_ttl", &traceroute.max_ttl, {1, net::kMaxTtl});
  r.Optional("refresh_period", &traceroute.refresh_period, Range{1s, 24h});
  r.Optional("loss_retrace_after", &traceroute.loss_retrace_after, Range{0s, 24h});
}

void ReadUpload(MapReader& r, UploadConfig& upload) {
  // The analyzer refuses a batch of more (common/base/upload_limits.h).
  r.Optional("batch_max_results", &upload.batch_max_results,
             {1u, static_cast<std::uint32_t>(kMaxResultsPerBatch)});
  r.Optional("batch_max_age", &upload.batch_max_age, Range{1ms, 60s});
  r.Optional("buffer_budget", &upload.buffer_budget, {config::MiB(1), config::GiB(16)});
  r.Optional("hello_timeout", &upload.hello_timeout, Range{1s, 10min});
  const bool initial_ok = r.Optional("backoff_initial", &upload.backoff_initial, Range{1ms, 60s});
  const bool max_ok = r.Optional("backoff_max", &upload.backoff_max, Range{1ms, 1h});
  if (initial_ok && max_ok && upload.backoff_max < upload.backoff_initial) {
    r.Fail("backoff_max", "must be at least upload.backoff_initial (" +
                              config::FormatDuration(upload.backoff_initial) + "), got " +
                              config::FormatDuration(upload.backoff_max));
  }
}

void ReadRecorder(MapReader& r, RecorderConfig& recorder) {
  r.Optional("bytes", &recorder.bytes, {config::KiB(16), config::MiB(64)});
  r.Optional("window", &recorder.window, Range{1s, 24h});
  if (r.Optional("state_dir", &recorder.state_dir) &&
      (recorder.state_dir.empty() || recorder.state_dir.front() != '/')) {
    r.Fail("state_dir", "must be an absolute path, got " + config::Quote(recorder.state_dir));
  }
  r.Optional("keep_files", &recorder.keep_files, {1u, 1000u});
  r.Optional("captures_per_minute", &recorder.captures_per_minute,
             Range{0.0, 600.0, LowerBound::kExclusive});
}

void ReadProtect(MapReader& r, ProtectConfig& protect) {
  r.Optional("enabled", &protect.enabled);
  if (r.Optional("root", &protect.root) && (protect.root.empty() || protect.root.front() != '/')) {
    r.Fail("root", "must be an absolute path, got " + config::Quote(protect.root));
  }
  r.Optional("sample_every", &protect.sample_every, Range{100ms, 60s});
  if (r.Optional("signals", &protect.signals)) {
    for (const std::string& name : protect.signals) {
      if (std::find(protect::kSignalNames.begin(), protect::kSignalNames.end(), name) ==
          protect::kSignalNames.end()) {
        r.Fail("signals", "unknown signal " + config::Quote(name) +
                              "; known: cpu, memory, cgroup_cpu, cgroup_memory, cgroup_throttled, "
                              "self_cpu_wait");
      }
    }
  }
  protect::GovernorOptions& g = protect.governor;
  if (r.Optional("steps", &g.steps)) {
    if (const std::string error = protect::CheckGovernorOptions(g); !error.empty()) {
      r.Fail("steps", error + " (for example [1, 0.5, 0.25, 0.1])");
    }
  }
  const Range<double> percent{0.0, 100.0, LowerBound::kExclusive};
  r.Optional("cpu_high_percent", &g.cpu_high, percent);
  r.Optional("memory_high_percent", &g.memory_high, percent);
  r.Optional("throttled_high_percent", &g.throttled_high, percent);
  r.Optional("calm_share", &g.calm_share, Range{0.01, 0.99});
  r.Optional("step_down_every", &g.step_down_every, Range{100ms, 10min});
  r.Optional("calm_for", &g.calm_for, Range{1s, 1h});
}

// Whether some NIC has `device` as its netdev (`netdev`) or rdma_device (`rdma`).
bool SomeNicHas(const std::vector<NicConfig>& nics, const std::string& device, bool netdev,
                bool rdma) {
  return std::any_of(nics.begin(), nics.end(), [&](const NicConfig& nic) {
    return (netdev && nic.netdev == device) || (rdma && nic.rdma_device == device);
  });
}

// Why `rule` names no device of the configured NICs, or nullopt: an entry
// that matches nothing is a typo that would leave the reads going on.
std::optional<std::string> CheckExcludeDevice(const telemetry::ExcludeRule& rule,
                                              const std::vector<NicConfig>& nics) {
  using telemetry::ExcludeWhat;
  if (rule.device.empty()) return std::nullopt;
  switch (rule.what) {
    case ExcludeWhat::kPortCounter:
      if (SomeNicHas(nics, rule.device, false, true)) return std::nullopt;
      return "port counters belong to an RDMA device, and " + rule.device +
             " is not the rdma_device of any NIC";
    case ExcludeWhat::kEthtoolStat:
    case ExcludeWhat::kEthtool:
      if (SomeNicHas(nics, rule.device, true, false)) return std::nullopt;
      return "ethtool statistics belong to a netdev, and " + rule.device +
             " is not the netdev of any NIC";
    case ExcludeWhat::kDevice:
    case ExcludeWhat::kPcie:
      break;
  }
  if (SomeNicHas(nics, rule.device, true, true)) return std::nullopt;
  return rule.device + " is not the netdev or rdma_device of any NIC";
}

// telemetry.exclude: a list of strings, each checked on its own.
void ReadTelemetryExclude(MapReader& r, const std::vector<NicConfig>& nics,
                          std::vector<telemetry::ExcludeRule>& exclude) {
  std::vector<std::string> entries;
  if (!r.Optional("exclude", &entries)) return;
  for (const std::string& text : entries) {
    std::string why;
    std::optional<telemetry::ExcludeRule> rule = telemetry::ParseExcludeRule(text, &why);
    if (!rule) {
      r.Fail("exclude", "entry " + config::Quote(text) + ": " + why);
      continue;
    }
    if (auto bad = CheckExcludeDevice(*rule, nics)) {
      r.Fail("exclude", "entry " + config::Quote(text) + ": " + *bad);
      continue;
    }
    if (std::find(exclude.begin(), exclude.end(), *rule) != exclude.end()) {
      r.Fail("exclude", "entry " + config::Quote(text) + " is listed twice");
      continue;
    }
    exclude.push_back(std::move(*rule));
  }
}

// After the NICs: the exclusion list names their devices.
void ReadTelemetry(MapReader& r, const std::vector<NicConfig>& nics, TelemetryConfig& telemetry) {
  r.Optional("enabled", &telemetry.enabled);
  r.Optional("period", &telemetry.period, Range{1s, 1h});
  if (r.Optional("sysfs_root", &telemetry.sysfs_root) && telemetry.sysfs_root.front() != '/') {
    r.Fail("sysfs_root", "must be an absolute path, got " + config::Quote(telemetry.sysfs_root));
  }
  r.Optional("ethtool", &telemetry.ethtool);
  r.Optional("upload", &telemetry.upload);
  ReadTelemetryExclude(r, nics, telemetry.exclude);
  if (r.Optional("pause_priorities", &telemetry.pause_priorities)) {
    std::vector<std::uint32_t> seen;
    for (std::uint32_t p : telemetry.pause_priorities) {
      if (p > 7) {
        r.Fail("pause_priorities", "PFC priorities are 0..7, got " + std::to_string(p));
        return;
      }
      if (std::find(seen.begin(), seen.end(), p) != seen.end()) {
        r.Fail("pause_priorities", "priority " + std::to_string(p) + " is listed twice");
        return;
      }
      seen.push_back(p);
    }
  }
}

// Where a unique NIC attribute was first seen, to name both places in an error.
template <typename T>
struct FirstSeen {
  std::vector<std::pair<T, std::string>> seen;

  // The path of an earlier NIC with the same value, or nullopt after recording this one.
  std::optional<std::string> Claim(const T& value, const std::string& path) {
    for (const auto& [v, p] : seen) {
      if (v == value) return p;
    }
    seen.emplace_back(value, path);
    return std::nullopt;
  }
};

struct NicUniqueness {
  FirstSeen<std::string> names;
  FirstSeen<int> rails;
  FirstSeen<config::IpAddress> ips;
};

void ReadNic(MapReader& r, Transport transport, NicUniqueness& unique, NicConfig& nic) {
  if (r.Required("name", &nic.name)) {
    CheckName(r, "name", nic.name, kMaxName);
    if (auto other = unique.names.Claim(nic.name, r.path())) {
      r.Fail("name", "duplicate NIC name " + config::Quote(nic.name) + " (also " + *other + ")");
    }
  }
  if (r.Required("rail", &nic.rail, {0, 255})) {
    if (auto other = unique.rails.Claim(nic.rail, r.path())) {
      r.Fail("rail", "duplicate rail " + std::to_string(nic.rail) + " (also " + *other + ")");
    }
  }
  if (r.Required("ip", &nic.ip)) {
    if (auto other = unique.ips.Claim(nic.ip, r.path())) {
      r.Fail("ip", "duplicate IP " + nic.ip.ToString() + " (also " + *other + ")");
    }
  }

  // UDP binds its sockets to the netdev (SO_BINDTODEVICE) so that probes between
  // two NICs of one host leave through the wire instead of the loopback path.
  const bool has_netdev = transport == Transport::kUdp ? r.Required("netdev", &nic.netdev)
                                                       : r.Optional("netdev", &nic.netdev);
  if (has_netdev) CheckName(r, "netdev", nic.netdev, kMaxNetdevName);
  const bool has_device = transport == Transport::kVerbs
                              ? r.Required("rdma_device", &nic.rdma_device)
                              : r.Optional("rdma_device", &nic.rdma_device);
  if (has_device) CheckName(r, "rdma_device", nic.rdma_device, kMaxRdmaDeviceName);
  r.Optional("rdma_port", &nic.rdma_port, {1, 255});
  r.Optional("gid_index", &nic.gid_index, {0, 255});

  // auto needs a way to reach the NIC at all: a device for verbs or a netdev for UDP.
  if (transport == Transport::kAuto && !r.Has("netdev") && !r.Has("rdma_device")) {
    r.Fail("rdma_device", "transport auto needs rdma_device or netdev (or both) for each NIC");
  }
}

// Uploads are mutual TLS unless the file says `insecure: true` in so many words;
// without a tls block the files are looked for where the packages put them.
void ReadAnalyzer(MapReader& m, AnalyzerConfig& analyzer) {
  if (m.Required("address", &analyzer.address) && analyzer.address.port == 0) {
    m.Fail("address", "port must be between 1 and 65535, got 0");
  }
  m.Optional("insecure", &analyzer.insecure);
  if (analyzer.insecure && m.Has("tls")) {
    m.Fail("insecure", "true and a tls block contradict each other: remove one");
  }
  m.Map("tls", [&](MapReader& t) {
    for (const auto& [key, path] :
         {std::pair{"ca", &analyzer.tls.ca}, std::pair{"cert", &analyzer.tls.cert},
          std::pair{"key", &analyzer.tls.key}}) {
      std::string text;
      if (t.Optional(key, &text)) *path = text;
    }
    t.Optional("server_name", &analyzer.server_name);
  });
}

void ReadAgent(MapReader& r, AgentConfig& cfg) {
  if (r.Required("host", &cfg.host)) CheckName(r, "host", cfg.host, kMaxName);
  cfg.agent_id = cfg.host;
  if (r.Optional("agent_id", &cfg.agent_id)) CheckName(r, "agent_id", cfg.agent_id, kMaxName);
  r.Optional("log_level", &cfg.log_level, kLogLevelNames);
  // Read before the NICs: which of their keys are required depends on it.
  r.Optional("transport", &cfg.transport, kTransportNames);

  r.RequiredMap("analyzer", [&](MapReader& m) { ReadAnalyzer(m, cfg.analyzer); });
  r.Map("metrics", [&](MapReader& m) {
    m.Optional("listen", &cfg.metrics.listen);
    m.Optional("debug_hooks", &cfg.metrics.debug_hooks);
    m.Optional("debug_hooks_listen", &cfg.metrics.debug_hooks_listen);
    if (!IsLoopback(cfg.metrics.debug_hooks_listen.host)) {
      m.Fail("debug_hooks_listen",
             "must be a loopback address (127.0.0.1 or ::1): the hooks are unauthenticated, got " +
                 config::Quote(cfg.metrics.debug_hooks_listen.host));
    }
    config::ReadHttpServerKeys(m, cfg.metrics.server);
  });
  r.Map("probe", [&](MapReader& m) { ReadProbe(m, cfg.probe); });
  r.Map("ports", [&](MapReader& m) { ReadPorts(m, cfg.ports); });
  r.Map("traceroute", [&](MapReader& m) { ReadTraceroute(m, cfg.traceroute); });
  r.Map("upload", [&](MapReader& m) { ReadUpload(m, cfg.upload); });

  NicUniqueness unique;
  size_t listed = 0;
  const bool is_list = r.RequiredList("nics", [&](MapReader& m) {
    ++listed;
    ReadNic(m, cfg.transport, unique, cfg.nics.emplace_back());
  });
  if (is_list && listed < 2) {
    r.Fail("nics", "must list at least 2 NICs (probes run between the NICs of one host), got " +
                       std::to_string(listed));
  }
  r.Map("telemetry", [&](MapReader& m) { ReadTelemetry(m, cfg.nics, cfg.telemetry); });
  r.Map("recorder", [&](MapReader& m) { ReadRecorder(m, cfg.recorder); });
  r.Map("protect", [&](MapReader& m) { ReadProtect(m, cfg.protect); });
}

}  // namespace

std::string_view TransportName(Transport transport) {
  for (const EnumName<Transport>& entry : kTransportNames) {
    if (entry.value == transport) return entry.name;
  }
  return "unknown";
}

AgentConfig ParseAgentConfig(std::string_view text, std::string_view source_name) {
  return config::ParseConfig<AgentConfig>(text, source_name, ReadAgent);
}

AgentConfig LoadAgentConfig(const std::filesystem::path& path) {
  return config::LoadConfig<AgentConfig>(path, ReadAgent);
}

}  // namespace hostmesh::agent
