// The analyzer's own series on the process registry, read at scrape time from
// the published snapshot: SLA drop ratios and latency quantiles (cluster, per
// rail, per host), open incidents by kind, window lag and analysis counters.
// Series follow the latest window, so a host gone from it leaves /metrics too.
#pragma once

#include "analyzer/api/api_snapshot.h"
#include "analyzer/store/store.h"
#include "common/base/clock.h"
#include "common/metrics/registry.h"

namespace hostmesh::analyzer::app {

// `holder` and `clock` must outlive the registry's scrapes.
void RegisterAnalyzerMetrics(metrics::Registry& registry, const api::SnapshotHolder& holder,
                             const Clock& clock);

// The store's size per column family (RocksDB properties, read at scrape
// time): what the disk holds and what retention keeps it at. `store` must
// outlive the registry's scrapes.
void RegisterStoreMetrics(metrics::Registry& registry, const store::Store& store);

}  // namespace hostmesh::analyzer::app
