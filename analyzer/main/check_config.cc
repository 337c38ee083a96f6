#include "analyzer/main/check_config.h"

#include <exception>

#include "common/base/exit_codes.h"
#include "common/config/config_error.h"
#include "common/config/value_parsers.h"
#include "topology/inventory_loader.h"

namespace hostmesh::analyzer::app {

int CheckConfig(const AnalyzerConfig& config, std::ostream& out, std::ostream& err) {
  std::string inventory = "none (the fabric is learned from traceroutes)";
  if (!config.inventory.empty()) {
    try {
      const topology::Topology topo = topology::LoadInventoryFile(config.inventory);
      const std::size_t hosts = topo.CountDevices(topology::Tier::kHost);
      inventory = config.inventory.string() + ": " + std::to_string(topo.devices().size() - hosts) +
                  " switches, " + std::to_string(topo.links().size()) + " links, " +
                  std::to_string(hosts) + " hosts";
    } catch (const config::ConfigError& e) {
      err << e.what() << "\n";
      return kExitConfig;
    } catch (const std::exception& e) {
      err << config.inventory.string() << ": " << e.what() << "\n";
      return kExitConfig;
    }
  }
  out << "config ok: grpc " << config.grpc_listen.ToString() << ", http "
      << config.http_listen.ToString() << ", data_dir " << config.data_dir.string() << ", window "
      << config::FormatDuration(config.analysis.window) << ", grace "
      << config::FormatDuration(config.analysis.grace) << "; inventory " << inventory << "; ingest "
      << (config.grpc_insecure ? "plaintext (insecure)" : "mutual TLS") << "\n";
  return kExitOk;
}

}  // namespace hostmesh::analyzer::app
