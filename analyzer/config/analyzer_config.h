#pragma once

// The analyzer's configuration file (--config), an operator contract: key names
// and defaults are documented in deploy/analyzer.example.yaml.

#include <chrono>
#include <filesystem>
#include <string_view>

#include "analyzer/analysis/config.h"
#include "analyzer/evidence/evidence_config.h"
#include "common/base/logging.h"
#include "common/config/http_server_config.h"
#include "common/config/value_types.h"
#include "common/tls/tls_files.h"

namespace hostmesh::analyzer {

struct AnalyzerConfig {
  LogLevel log_level = LogLevel::kInfo;
  config::Endpoint grpc_listen{"0.0.0.0", 50051};  // port 0: any free port
  // Mutual TLS on ingest (grpc.tls: cert, key, client_ca), unless grpc_insecure.
  tls::TlsFiles grpc_tls{"/etc/hostmesh/tls/analyzer.crt", "/etc/hostmesh/tls/analyzer.key",
                         "/etc/hostmesh/tls/ca.crt"};
  std::string spiffe_trust_domain;
  std::string grpc_crl_dir;    // grpc.tls.crl_dir: revoked agent certificates
  bool grpc_insecure = false;  // grpc.insecure: plaintext, anyone may upload as anyone
  // Batches read and not yet durable, all streams together (grpc.max_in_flight_bytes).
  std::uint64_t grpc_max_in_flight_bytes = std::uint64_t{1} << 30;
  // Per agent id (grpc.agent_bytes_per_second, grpc.agent_burst_bytes).
  std::uint64_t grpc_agent_bytes_per_second = std::uint64_t{1} << 20;
  std::uint64_t grpc_agent_burst_bytes = std::uint64_t{256} << 20;
  // Upload streams one certificate may hold open (grpc.max_streams_per_agent; 0: no limit).
  std::uint32_t grpc_max_streams_per_agent = 4;
  // Upload streams one certificate may open a minute, beyond a burst of 8
  // (grpc.stream_opens_per_minute; 0: no limit).
  std::uint32_t grpc_stream_opens_per_minute = 12;
  // Bytes the analyzer refuses, per certificate (grpc.refused_burst_bytes,
  // grpc.refused_bytes_per_second), how long a refused stream waits before
  // it ends (grpc.refusal_delay) and streams at once on one connection
  // (grpc.max_streams_per_connection): ingest_handler.h, refusal_tarpit.h.
  std::uint64_t grpc_refused_burst_bytes = std::uint64_t{1} << 20;
  std::uint64_t grpc_refused_bytes_per_second = std::uint64_t{64} << 10;
  std::chrono::nanoseconds grpc_refusal_delay = std::chrono::seconds{1};
  std::uint32_t grpc_max_streams_per_connection = 16;
  config::Endpoint http_listen{"0.0.0.0", 8080};
  // TLS, token and caps of the HTTP server (API, on-call page, /metrics).
  // Browsers open up to six connections each and on-call users may share a
  // NAT address: 512 in all, 32 from one address.
  config::HttpServerConfig http{.max_connections = 512, .max_connections_per_peer = 32};
  std::filesystem::path data_dir = "./hostmesh-data";
  std::filesystem::path inventory;  // empty: no inventory, the fabric is learned from traces
  // Raw results and path reports; at fleet rate they are most of the disk
  // (docs/analyzer.md, "The analyzer at fleet scale": 145 MB per host per day).
  std::chrono::nanoseconds raw_retention = std::chrono::hours{6};
  std::chrono::nanoseconds summary_retention = std::chrono::hours{24 * 30};
  // On restart, path reports this far back are replayed (longer than the
  // agents' traceroute refresh, so every traced 5-tuple has its path again)...
  std::chrono::nanoseconds restore_paths = std::chrono::minutes{15};
  // ...and results not yet judged, at most this far back: windows older than
  // that which the analyzer was down for are not judged (their results stay
  // in the store).
  std::chrono::nanoseconds restore_results = std::chrono::minutes{5};
  // What each incident keeps of its evidence (first-failure capture).
  evidence::EvidenceConfig evidence;
  // window, grace, rnic_anomalous_ratio, rnic_sticky come from the file; the
  // rest keep the analysis library's defaults.
  analysis::AnalysisConfig analysis;
};

// Both throw config::ConfigError listing every problem, each with key path and line.
AnalyzerConfig LoadAnalyzerConfig(const std::filesystem::path& path);
AnalyzerConfig ParseAnalyzerConfig(std::string_view text, std::string_view source_name);

}  // namespace hostmesh::analyzer
