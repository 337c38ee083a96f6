// `hostmesh-analyzer --audit-store`: opens the data dir (the analyzer must be
// stopped: RocksDB locks it) and prints store::AuditResults as JSON lines.
#pragma once

#include <ostream>

#include "analyzer/config/analyzer_config.h"

namespace hostmesh::analyzer::app {

// 0: nothing stored twice; 1: duplicates; 2: the store cannot be opened.
int AuditStore(const AnalyzerConfig& config, std::ostream& out, std::ostream& err);

}  // namespace hostmesh::analyzer::app
