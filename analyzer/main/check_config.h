// `hostmesh-analyzer --check-config`: everything the daemon reads from files
// before it starts, checked without starting it.
#pragma once

#include <ostream>

#include "analyzer/config/analyzer_config.h"

namespace hostmesh::analyzer::app {

// Loads and checks the inventory the config names, as AnalyzerApp::Start
// would. Prints a summary (listen addresses, store, window, and the
// inventory's switches, links and hosts) to `out` and returns kExitOk, or
// prints the inventory's problems to `err` and returns kExitConfig.
int CheckConfig(const AnalyzerConfig& config, std::ostream& out, std::ostream& err);

}  // namespace hostmesh::analyzer::app
