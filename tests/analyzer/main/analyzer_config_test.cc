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

}  // namespace
}  // namespace hostmesh::analyzer
