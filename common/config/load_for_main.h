#pragma once

// The start of every hostmesh process: load the file named by --config, report
// its problems one way (the caller exits 2, like any usage error), and let
// --log-level override the file's level.

#include <exception>
#include <optional>
#include <ostream>
#include <string>

#include "common/base/logging.h"
#include "common/config/config_error.h"

namespace hostmesh::config {

// `load(path)` returns a Config with a `log_level` member or throws.
template <typename Config, typename Load>
std::optional<Config> LoadForMain(const std::string& path, const std::string& log_level_flag,
                                  Load load, std::ostream& err) {
  Config config;
  try {
    config = load(path);
  } catch (const ConfigError& e) {
    err << e.what() << "\n";  // already names file, line and key
    return std::nullopt;
  } catch (const std::exception& e) {
    err << path << ": " << e.what() << "\n";
    return std::nullopt;
  }
  if (!log_level_flag.empty()) {
    std::string error;
    const auto level = ParseLogLevel(log_level_flag, &error);
    if (!level) {
      err << "--log-level: " << error << "\n";
      return std::nullopt;
    }
    config.log_level = *level;
  }
  return config;
}

}  // namespace hostmesh::config
