// hostmesh-analyzer: flags, logging and signals; everything else is hm_analyzer_app.
// Exit codes: common/base/exit_codes.h (0 ok, 1 failure, 2 usage, config or
// inventory error); --audit-store: 1 when something is stored twice.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "analyzer/config/analyzer_config.h"
#include "analyzer/ingest/grpc_listener_watch.h"
#include "analyzer/ingest/process_tuning.h"
#include "analyzer/main/analyzer_app.h"
#include "analyzer/main/audit_store.h"
#include "analyzer/main/check_config.h"
#include "common/base/exit_codes.h"
#include "common/base/logging.h"
#include "common/base/service_notify.h"
#include "common/base/stop_signals.h"
#include "common/config/config_error.h"
#include "common/config/main_flags.h"
#include "common/metrics/registry.h"
#include "common/tls/tls_files.h"

#ifndef HOSTMESH_VERSION
#define HOSTMESH_VERSION "unknown"
#endif

int main(int argc, char** argv) {
  using namespace hostmesh;
  CLI::App cli{"hostmesh analyzer: ingest, windows, RNIC and link verdicts, SLA, HTTP API"};
  std::string config_path;
  std::string log_level;
  bool check_config = false;
  bool audit_store = false;
  cli.add_option("--config", config_path, "analyzer config file (YAML)");
  cli.add_flag("--check-config", check_config, "validate the config, print a summary, exit");
  cli.add_flag("--audit-store", audit_store,
               "with the analyzer stopped: print per agent, boot and NIC the stored results, "
               "duplicates and missing sequences (JSON lines); exit 1 if any is stored twice");
  cli.add_option("--log-level", log_level,
                 "trace|debug|info|warn|error|critical|off (overrides the config's log_level)");
  cli.set_version_flag("--version", std::string("hostmesh-analyzer ") + HOSTMESH_VERSION);
  int exit_code = kExitOk;
  std::optional<analyzer::AnalyzerConfig> loaded =
      config::ParseFlagsAndLoad<analyzer::AnalyzerConfig>(cli, argc, argv, config_path, log_level,
                                                          analyzer::LoadAnalyzerConfig, &exit_code);
  if (!loaded) return exit_code;
  analyzer::AnalyzerConfig config = std::move(*loaded);
  if (check_config) return analyzer::app::CheckConfig(config, std::cout, std::cerr);
  if (!config.grpc_insecure) {
    // Checked at start, not by --check-config (which checks the file, often
    // where the secrets are not, as in CI): a certificate that does not load
    // is a config error all the same, exit 2 and no restart loop.
    if (auto why = tls::CheckTlsFiles(config.grpc_tls)) {
      std::cerr << config_path << ": grpc.tls: " << *why << "\n";
      return kExitConfig;
    }
  }
  InitLogging(config.log_level);
  if (audit_store) return analyzer::app::AuditStore(config, std::cout, std::cerr);

  const analyzer::ingest::ProcessTuning tuning = analyzer::ingest::TuneProcess();  // before threads
  analyzer::ingest::WatchGrpcLog();        // before gRPC starts
  const int stop_fd = BlockStopSignals();  // before any thread starts
  if (stop_fd < 0) {
    std::perror("signalfd");
    return kExitFailure;
  }

  const SystemClock clock;
  metrics::Registry registry;  // before the app: the app's series read its snapshot
  analyzer::app::AnalyzerAppOptions options;
  options.version = HOSTMESH_VERSION;
  ServiceNotifier systemd;
  options.heartbeat = [&systemd](MonoTime now) { systemd.Alive(now); };
  analyzer::app::AnalyzerApp app(std::move(config), std::move(options), clock, registry);
  std::string error;
  if (!app.Start(&error)) {
    GetLogger("analyzer")->critical("cannot start: {}", error);
    return app.start_exit_code();  // 2 for an inventory error: systemd does not retry
  }
  GetLogger("analyzer")
      ->info("open files limit {} (each agent holds a connection)", tuning.open_files);
  systemd.Ready("judging windows");
  app.Run(stop_fd);
  ::close(stop_fd);
  return kExitOk;
}
