#pragma once

// The analyzer's configuration file (--config), an operator contract: key names
// and defaults are documented in deploy/analyzer.example.yaml.

#include <chrono>
#include <filesystem>
#include <string_view>

#include "analyzer/analysis/config.h"
#include "common/base/logging.h"
#include "common/config/value_types.h"

namespace hostmesh::analyzer {

struct AnalyzerConfig {
  LogLevel log_level = LogLevel::kInfo;
  config::Endpoint grpc_listen{"0.0.0.0", 50051};  // port 0: any free port
  config::Endpoint http_listen{"0.0.0.0", 8080};
  std::filesystem::path data_dir = "./hostmesh-data";
  std::filesystem::path inventory;  // empty: no inventory, paths are not resolved
  std::chrono::nanoseconds raw_retention = std::chrono::hours{24};
  std::chrono::nanoseconds summary_retention = std::chrono::hours{24 * 30};
  // window, grace, rnic_anomalous_ratio, rnic_sticky come from the file; the
  // rest keep the analysis library's defaults.
  analysis::AnalysisConfig analysis;
};

// Both throw config::ConfigError listing every problem, each with key path and line.
AnalyzerConfig LoadAnalyzerConfig(const std::filesystem::path& path);
AnalyzerConfig ParseAnalyzerConfig(std::string_view text, std::string_view source_name);

}  // namespace hostmesh::analyzer
