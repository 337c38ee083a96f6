#include "analyzer/main/audit_store.h"

#include "analyzer/store/store.h"
#include "analyzer/store/store_audit.h"
#include "common/base/clock.h"

namespace hostmesh::analyzer::app {

int AuditStore(const AnalyzerConfig& config, std::ostream& out, std::ostream& err) {
  const SystemClock clock;
  store::StoreOptions options;
  options.data_dir = config.data_dir;
  options.raw_retention = config.raw_retention;
  options.summary_retention = config.summary_retention;
  std::string error;
  const auto store = store::Store::Open(clock, options, error);
  if (!store) {
    err << "store " << config.data_dir.string() << ": " << error
        << " (is the analyzer still running?)\n";
    return 2;
  }
  store::ResultAuditor auditor;
  const store::StoreStatus status =
      store->ScanResults(WallTime::min(), WallTime::max(), [&](const store::StoredResult& r) {
        auditor.Add(r.agent_id, r.boot_id, r.result->src_nic(), r.result->sequence());
        return true;
      });
  if (!status.ok()) {
    err << "store " << config.data_dir.string() << ": " << status.error << "\n";
    return 2;
  }
  const auto rows = auditor.Rows();
  out << store::AuditJsonLines(rows);
  for (const auto& row : rows) {
    if (row.duplicates > 0) return 1;
  }
  return 0;
}

}  // namespace hostmesh::analyzer::app
