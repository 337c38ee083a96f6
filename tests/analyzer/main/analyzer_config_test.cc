// The analyzer's config file: defaults, every key, and errors with key and line.
#include "analyzer/config/analyzer_config.h"

#include <gtest/gtest.h>

#include "common/config/config_error.h"

namespace hostmesh::analyzer {
namespace {

using namespace std::chrono_literals;

TEST(AnalyzerConfig, EmptyFileGivesTheDocumentedDefaults) {
  const AnalyzerConfig c = ParseAnalyzerConfig("{}", "a.yaml");
  EXPECT_EQ(c.grpc_listen.ToString(), "0.0.0.0:50051");
  EXPECT_EQ(c.http_listen.ToString(), "0.0.0.0:8080");
  EXPECT_FALSE(c.http.tls());
  EXPECT_EQ(c.http.bearer_token_file, "");
  EXPECT_FALSE(c.http.protect_metrics);
  EXPECT_EQ(c.http.max_connections, 512u);
  EXPECT_EQ(c.http.max_connections_per_peer, 32u);
  EXPECT_EQ(c.http.timeout, 10s);
  EXPECT_EQ(c.data_dir, "./hostmesh-data");
  EXPECT_TRUE(c.inventory.empty());
  EXPECT_EQ(c.analysis.window, 20s);
  EXPECT_EQ(c.analysis.rnic_anomalous_ratio, 0.1);
  EXPECT_EQ(c.analysis.rnic_sticky, 60s);
  EXPECT_EQ(c.analysis.path_ttl, 5min);
  EXPECT_EQ(c.raw_retention, 6h);
  EXPECT_EQ(c.summary_retention, 720h);
  EXPECT_EQ(c.restore_paths, 15min);
  EXPECT_EQ(c.restore_results, 5min);
}

TEST(AnalyzerConfig, EveryKeyIsRead) {
  const AnalyzerConfig c = ParseAnalyzerConfig(R"(log_level: debug
grpc: {listen: 127.0.0.1:0}
http: {listen: 127.0.0.1:9}
data_dir: /var/lib/hm
inventory: /etc/hm/inv.yaml
window: 2s
grace: 1s
path_ttl: 90s
thresholds: {rnic_timeout_fraction: 0.25, rnic_sticky: 10s}
retention: {raw: 1h, summaries: 48h}
restore: {paths: 30m, results: 1m}
)",
                                               "a.yaml");
  EXPECT_EQ(c.log_level, LogLevel::kDebug);
  EXPECT_EQ(c.grpc_listen.ToString(), "127.0.0.1:0");
  EXPECT_EQ(c.http_listen.port, 9);
  EXPECT_EQ(c.data_dir, "/var/lib/hm");
  EXPECT_EQ(c.inventory, "/etc/hm/inv.yaml");
  EXPECT_EQ(c.analysis.window, 2s);
  EXPECT_EQ(c.analysis.grace, 1s);
  EXPECT_EQ(c.analysis.path_ttl, 90s);
  EXPECT_EQ(c.analysis.rnic_anomalous_ratio, 0.25);
  EXPECT_EQ(c.analysis.rnic_sticky, 10s);
  EXPECT_EQ(c.raw_retention, 1h);
  EXPECT_EQ(c.summary_retention, 48h);
  EXPECT_EQ(c.restore_paths, 30min);
  EXPECT_EQ(c.restore_results, 1min);
}

TEST(AnalyzerConfig, HttpServerKeysAreRead) {
  const AnalyzerConfig c = ParseAnalyzerConfig(R"(http:
  listen: 10.0.0.2:8443
  tls:
    cert: /etc/hm/http.crt
    key: /etc/hm/http.key
  bearer_token_file: /etc/hm/api-token
  max_connections: 1000
  max_connections_per_peer: 50
  timeout: 30s
)",
                                               "a.yaml");
  EXPECT_EQ(c.http_listen.ToString(), "10.0.0.2:8443");
  EXPECT_EQ(c.http.tls_cert, "/etc/hm/http.crt");
  EXPECT_EQ(c.http.tls_key, "/etc/hm/http.key");
  EXPECT_EQ(c.http.tls_client_ca, "");
  EXPECT_EQ(c.http.bearer_token_file, "/etc/hm/api-token");
  EXPECT_FALSE(c.http.protect_metrics);
  EXPECT_EQ(c.http.max_connections, 1000u);
  EXPECT_EQ(c.http.max_connections_per_peer, 50u);
  EXPECT_EQ(c.http.timeout, 30s);
}

TEST(AnalyzerConfig, HttpServerErrorsNameKeyAndLine) {
  try {
    ParseAnalyzerConfig(
        "http:\n  tls:\n  timeout: 1h\n  max_connections: 10\n"
        "  max_connections_per_peer: 11\n",
        "a.yaml");
    FAIL() << "accepted";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 4u) << e.what();
    EXPECT_EQ(e.issues()[0].path, "http.tls.cert");
    EXPECT_EQ(e.issues()[0].line, 2);
    EXPECT_EQ(e.issues()[1].path, "http.tls.key");
    EXPECT_EQ(e.issues()[2].path, "http.timeout");
    EXPECT_EQ(e.issues()[2].line, 3);
    EXPECT_EQ(e.issues()[3].path, "http.max_connections_per_peer");
    EXPECT_EQ(e.issues()[3].line, 5);
  }
}

TEST(AnalyzerConfig, EveryDecisionThresholdIsTheOperators) {
  const AnalyzerConfig c = ParseAnalyzerConfig(R"(thresholds:
  rnic_down_fraction: 0.8
  rnic_down_send_failures: 0.7
  min_loss: 0.001
  prior_background_loss: 1e-5
  false_alarms_per_window: 1e-6
  window_alpha: 1e-5
  min_failures: 5
  churn_inside: 0.95
  churn_own_alpha: 1e-5
  route_withdrawn_alpha: 1e-9
  hotspot_min_excess: 30us
  hotspot_noise_z: 6
  hotspot_open_windows: 2
  processing_factor: 5
  processing_min_excess: 1ms
  resolve_after_clean_windows: 4
  resolve_after_unobserved_windows: 30
)",
                                               "a.yaml");
  const analysis::AnalysisConfig& a = c.analysis;
  EXPECT_EQ(a.rnic_down_ratio, 0.8);
  EXPECT_EQ(a.rnic_down_send_failure_share, 0.7);
  EXPECT_EQ(a.min_loss, 0.001);
  EXPECT_EQ(a.prior_background_loss, 1e-5);
  EXPECT_EQ(a.false_alarms_per_window, 1e-6);
  EXPECT_EQ(a.window_alpha, 1e-5);
  EXPECT_EQ(a.min_failures, 5u);
  EXPECT_EQ(a.churn_inside, 0.95);
  EXPECT_EQ(a.churn_own_alpha, 1e-5);
  EXPECT_EQ(a.route_withdrawn_alpha, 1e-9);
  EXPECT_EQ(a.hotspot_min_excess, 30us);
  EXPECT_EQ(a.hotspot_noise_z, 6);
  EXPECT_EQ(a.hotspot_open_windows, 2);
  EXPECT_EQ(a.proc_factor, 5);
  EXPECT_EQ(a.proc_min_excess, 1ms);
  EXPECT_EQ(a.resolve_after_clean_windows, 4);
  EXPECT_EQ(a.resolve_after_unobserved_windows, 30);
}

TEST(AnalyzerConfig, ADecisionThresholdOutOfRangeIsNamed) {
  try {
    ParseAnalyzerConfig("thresholds:\n  min_loss: 0\n  false_alarms_per_window: 0\n", "a.yaml");
    FAIL() << "accepted";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 2u) << e.what();
    EXPECT_EQ(e.issues()[0].path, "thresholds.min_loss");
    EXPECT_EQ(e.issues()[1].path, "thresholds.false_alarms_per_window");
    EXPECT_EQ(e.issues()[1].line, 3);
  }
}

TEST(AnalyzerConfig, ConfidenceMapsAreTheOperators) {
  const AnalyzerConfig c = ParseAnalyzerConfig(R"(thresholds:
  confidence:
    loss: [{raw: 0.1, p: 0.2}, {raw: 0.9, p: 0.95}]
    latency: []
)",
                                               "a.yaml");
  const analysis::ConfidenceCalibration& k = c.analysis.confidence;
  EXPECT_EQ(k.loss.points(), (std::vector<analysis::CalibrationPoint>{{0.1, 0.2}, {0.9, 0.95}}));
  EXPECT_DOUBLE_EQ(k.loss.Apply(0.5), 0.575);
  EXPECT_TRUE(k.latency.identity());  // an empty list: confidence = raw score
  // Absent: the default fitted on the simulator's suite.
  EXPECT_EQ(k.processing, analysis::DefaultConfidenceCalibration().processing);
  EXPECT_EQ(ParseAnalyzerConfig("", "a.yaml").analysis.confidence,
            analysis::DefaultConfidenceCalibration());
}

TEST(AnalyzerConfig, TheExampleFileSpellsOutTheDefaultConfidenceMaps) {
  const AnalyzerConfig c = LoadAnalyzerConfig(HOSTMESH_ANALYZER_EXAMPLE);
  EXPECT_EQ(c.analysis.confidence, analysis::DefaultConfidenceCalibration());
  EXPECT_FALSE(c.analysis.confidence.loss.identity());
}

TEST(AnalyzerConfig, ABadConfidenceMapIsNamed) {
  try {
    ParseAnalyzerConfig(R"(thresholds:
  confidence:
    loss: [{raw: 0.2, p: 0.5}, {raw: 0.1, p: 0.6}]
    latency: [{raw: 0.2, p: 0.5}, {raw: 0.4, p: 0.3}]
    processing: [{raw: 0.2, p: 1.5}]
)",
                        "a.yaml");
    FAIL() << "accepted";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 3u) << e.what();
    EXPECT_EQ(e.issues()[0].path, "thresholds.confidence.loss");
    EXPECT_EQ(e.issues()[0].line, 3);
    EXPECT_NE(e.issues()[0].message.find("raw must be above"), std::string::npos)
        << e.issues()[0].message;
    EXPECT_EQ(e.issues()[1].path, "thresholds.confidence.latency");
    EXPECT_NE(e.issues()[1].message.find("p must not be below"), std::string::npos)
        << e.issues()[1].message;
    EXPECT_EQ(e.issues()[2].path, "thresholds.confidence.processing[0].p");
  }
}

TEST(AnalyzerConfig, ErrorsNameTheKeyAndTheLine) {
  try {
    ParseAnalyzerConfig("window: 2s\nthresholds:\n  rnic_timeout_fraction: 2\nwindoe: 3s\n",
                        "a.yaml");
    FAIL() << "accepted";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 2u) << e.what();
    EXPECT_EQ(e.issues()[0].line, 3);
    EXPECT_EQ(e.issues()[0].path, "thresholds.rnic_timeout_fraction");
    EXPECT_EQ(e.issues()[1].line, 4);
    EXPECT_NE(e.issues()[1].ToString().find("window"), std::string::npos) << e.what();
  }
}

TEST(AnalyzerConfig, BadEndpointAndDurationAreReported) {
  try {
    ParseAnalyzerConfig("grpc:\n  listen: nowhere\nwindow: 0s\n", "a.yaml");
    FAIL() << "accepted";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 2u) << e.what();
    EXPECT_EQ(e.issues()[0].path, "grpc.listen");
    EXPECT_EQ(e.issues()[0].line, 2);
    EXPECT_EQ(e.issues()[1].path, "window");
    EXPECT_EQ(e.issues()[1].line, 3);
  }
}

TEST(AnalyzerConfig, ARestartReplaysNoFurtherBackThanRawRetention) {
  const AnalyzerConfig c = ParseAnalyzerConfig("retention: {raw: 10m}\n", "a.yaml");
  EXPECT_EQ(c.restore_paths, 10min);
  EXPECT_EQ(c.restore_results, 5min);
  try {
    ParseAnalyzerConfig("retention: {raw: 10m}\nrestore:\n  paths: 15m\n", "a.yaml");
    FAIL() << "accepted";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    EXPECT_EQ(e.issues()[0].path, "restore.paths");
    EXPECT_EQ(e.issues()[0].line, 3);
  }
}

TEST(AnalyzerConfig, EvidenceKeysAreReadAndItsRangeStaysInsideRawRetention) {
  const AnalyzerConfig c = ParseAnalyzerConfig(R"(
evidence:
  enabled: false
  before: 5m
  after: 30s
  incident_bytes: 1MiB
  disk_cap_bytes: 64MiB
  max_tuples: 100
  siblings: 0
  max_hosts: 2
)",
                                               "a.yaml");
  EXPECT_FALSE(c.evidence.enabled);
  EXPECT_EQ(c.evidence.before, 5min);
  EXPECT_EQ(c.evidence.after, 30s);
  EXPECT_EQ(c.evidence.incident_bytes, 1u << 20);
  EXPECT_EQ(c.evidence.disk_cap_bytes, 64u << 20);
  EXPECT_EQ(c.evidence.max_tuples, 100u);
  EXPECT_EQ(c.evidence.siblings, 0u);
  EXPECT_EQ(c.evidence.max_hosts, 2u);
  const AnalyzerConfig defaults = ParseAnalyzerConfig("", "a.yaml");
  EXPECT_TRUE(defaults.evidence.enabled);
  EXPECT_EQ(defaults.evidence.before, 2min);
  try {
    ParseAnalyzerConfig("retention: {raw: 10m}\nevidence:\n  before: 10m\n  max_hosts: 0\n",
                        "a.yaml");
    FAIL() << "accepted";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 2u) << e.what();
    EXPECT_EQ(e.issues()[0].path, "evidence.before");
    EXPECT_EQ(e.issues()[0].line, 3);
    EXPECT_EQ(e.issues()[1].path, "evidence.max_hosts");
  }
}

TEST(AnalyzerConfig, PathTtlOutlivesTheWindow) {
  // Unset, it grows with a long window; set shorter than window + grace, it is an error.
  EXPECT_EQ(ParseAnalyzerConfig("window: 10m\ngrace: 1m\n", "a.yaml").analysis.path_ttl, 11min);
  try {
    ParseAnalyzerConfig("window: 20s\ngrace: 10s\npath_ttl: 29s\n", "a.yaml");
    FAIL() << "accepted";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    EXPECT_EQ(e.issues()[0].path, "path_ttl");
    EXPECT_EQ(e.issues()[0].line, 3);
    EXPECT_NE(e.issues()[0].ToString().find("window + grace (30s)"), std::string::npos) << e.what();
  }
}

TEST(AnalyzerConfig, PathsPerHostAreCappedAboveWhatAnHonestAgentHolds) {
  EXPECT_EQ(ParseAnalyzerConfig("{}", "a.yaml").analysis.max_paths_per_host, 65'536u);
  EXPECT_EQ(ParseAnalyzerConfig("max_paths_per_host: 4096\n", "a.yaml").analysis.max_paths_per_host,
            4'096u);
  try {
    ParseAnalyzerConfig("window: 20s\nmax_paths_per_host: 100\n", "a.yaml");
    FAIL() << "accepted a cap an agent of 8 NICs would meet";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    EXPECT_EQ(e.issues()[0].path, "max_paths_per_host");
    EXPECT_EQ(e.issues()[0].line, 2);
  }
}

// Ingest is mutual TLS unless the file opts out in so many words (DESIGN 7).
TEST(AnalyzerConfig, IngestIsMutualTlsUnlessInsecureIsSaid) {
  const AnalyzerConfig packaged = ParseAnalyzerConfig("{}", "a.yaml");
  EXPECT_FALSE(packaged.grpc_insecure);
  EXPECT_EQ(packaged.grpc_tls.cert, "/etc/hostmesh/tls/analyzer.crt");
  EXPECT_EQ(packaged.grpc_tls.key, "/etc/hostmesh/tls/analyzer.key");
  EXPECT_EQ(packaged.grpc_tls.ca, "/etc/hostmesh/tls/ca.crt");
  EXPECT_EQ(packaged.grpc_max_in_flight_bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(packaged.grpc_max_streams_per_agent, 4u);
  EXPECT_EQ(packaged.grpc_stream_opens_per_minute, 12u);
  EXPECT_EQ(packaged.grpc_refused_burst_bytes, std::uint64_t{1} << 20);
  EXPECT_EQ(packaged.grpc_refused_bytes_per_second, std::uint64_t{64} << 10);
  EXPECT_EQ(packaged.grpc_refusal_delay, std::chrono::seconds{1});
  EXPECT_EQ(packaged.grpc_max_streams_per_connection, 16u);

  const AnalyzerConfig c = ParseAnalyzerConfig(R"(grpc:
  listen: 10.0.0.5:50051
  tls: {cert: /s/a.crt, key: /s/a.key, client_ca: /s/ca.crt, spiffe_trust_domain: gpu.example}
  max_in_flight_bytes: 256MiB
  agent_bytes_per_second: 2MiB
  agent_burst_bytes: 1GiB
  max_streams_per_agent: 8
  stream_opens_per_minute: 0
  refused_burst_bytes: 32MiB
  refused_bytes_per_second: 16KiB
  refusal_delay: 250ms
  max_streams_per_connection: 4
)",
                                               "a.yaml");
  EXPECT_EQ(c.grpc_tls.cert, "/s/a.crt");
  EXPECT_EQ(c.grpc_tls.key, "/s/a.key");
  EXPECT_EQ(c.grpc_tls.ca, "/s/ca.crt");
  EXPECT_EQ(c.spiffe_trust_domain, "gpu.example");
  EXPECT_EQ(c.grpc_max_in_flight_bytes, std::uint64_t{256} << 20);
  EXPECT_EQ(c.grpc_agent_bytes_per_second, std::uint64_t{2} << 20);
  EXPECT_EQ(c.grpc_agent_burst_bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(c.grpc_max_streams_per_agent, 8u);
  EXPECT_EQ(c.grpc_stream_opens_per_minute, 0u);
  EXPECT_EQ(c.grpc_refused_burst_bytes, std::uint64_t{32} << 20);
  EXPECT_EQ(c.grpc_refused_bytes_per_second, std::uint64_t{16} << 10);
  EXPECT_EQ(c.grpc_refusal_delay, std::chrono::milliseconds{250});
  EXPECT_EQ(c.grpc_max_streams_per_connection, 4u);
  for (const char* bad :
       {"grpc: {refused_burst_bytes: 100KiB}\n", "grpc: {refusal_delay: 2min}\n",
        "grpc: {max_streams_per_connection: 1}\n", "grpc: {stream_opens_per_minute: -1}\n"}) {
    try {
      ParseAnalyzerConfig(bad, "a.yaml");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const config::ConfigError& e) {
      ASSERT_EQ(e.issues().size(), 1u) << bad;
      EXPECT_EQ(e.issues()[0].path.rfind("grpc.", 0), 0u) << e.issues()[0].path;
    }
  }
  EXPECT_TRUE(ParseAnalyzerConfig("grpc: {insecure: true}\n", "a.yaml").grpc_insecure);
  try {
    ParseAnalyzerConfig("grpc: {insecure: true, tls: {cert: /a}}\n", "a.yaml");
    ADD_FAILURE() << "insecure with a tls block was accepted";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 1u);
    EXPECT_EQ(e.issues()[0].path, "grpc.insecure");
  }
}

}  // namespace
}  // namespace hostmesh::analyzer
