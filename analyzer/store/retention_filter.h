// Retention as a compaction filter: records whose time is older than the
// retention are dropped whenever RocksDB compacts the files holding them, with
// no scan and no delete per record. Store::EnforceRetention adds a DeleteRange
// for the time-keyed families so expiry is visible at once, not at the next
// compaction.
#pragma once

#include <rocksdb/compaction_filter.h>

#include <chrono>
#include <memory>

#include "common/base/clock.h"

namespace hostmesh::analyzer::store {

// Where a record keeps the time that ages it.
enum class RecordTime {
  kKeyPrefix,    // the first 8 key bytes (raw results, paths, windows, incidents)
  kValuePrefix,  // the first 8 value bytes: when it was stored (ledger, hellos)
};

struct RetentionRule {
  RecordTime where = RecordTime::kKeyPrefix;
  std::chrono::nanoseconds retention{0};
  // How far past its key time a record may hold data (raw chunks span a
  // bucket): it goes only when time + span is older than the retention.
  std::chrono::nanoseconds span{0};
};

// One filter per compaction, cut off at "now - retention" when it starts, so a
// long compaction never races the clock.
class RetentionFilterFactory final : public rocksdb::CompactionFilterFactory {
 public:
  RetentionFilterFactory(const Clock& clock, RetentionRule rule) : clock_(clock), rule_(rule) {}

  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  const char* Name() const override { return "hostmesh.RetentionFilterFactory"; }

 private:
  const Clock& clock_;
  const RetentionRule rule_;
};

}  // namespace hostmesh::analyzer::store
