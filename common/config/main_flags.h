#pragma once

// The command line every hostmesh daemon starts with: CLI11's parse, a
// required --config, then the file loaded (LoadForMain). Header-only: the
// programs that include it link CLI11.

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>
#include <string>

#include "common/base/exit_codes.h"
#include "common/config/load_for_main.h"

namespace hostmesh::config {

// Parses argv into `cli`'s options (which fill `config_path` and
// `log_level`), then loads the config. nullopt when the process is to exit
// now with `*exit_code`: 0 for --help and --version, 2 (kExitConfig) for a
// usage error, a missing --config or a bad file, like any config error.
template <typename Config, typename Load>
std::optional<Config> ParseFlagsAndLoad(CLI::App& cli, int argc, char** argv,
                                        const std::string& config_path,
                                        const std::string& log_level, Load load, int* exit_code) {
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *exit_code = cli.exit(e) == 0 ? kExitOk : kExitConfig;
    return std::nullopt;
  }
  *exit_code = kExitConfig;
  if (config_path.empty()) {
    std::cerr << "--config is required\n" << cli.help();
    return std::nullopt;
  }
  return LoadForMain<Config>(config_path, log_level, load, std::cerr);
}

}  // namespace hostmesh::config
