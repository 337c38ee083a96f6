#include "analyzer/store/retention_filter.h"

#include <string>

#include "analyzer/store/store_keys.h"

namespace hostmesh::analyzer::store {

namespace {

class RetentionFilter final : public rocksdb::CompactionFilter {
 public:
  RetentionFilter(RecordTime where, std::int64_t cutoff_ns)
      : where_(where), cutoff_ns_(cutoff_ns) {}

  Decision FilterV2(int /*level*/, const rocksdb::Slice& key, ValueType type,
                    const rocksdb::Slice& value, std::string* /*new_value*/,
                    std::string* skip_until) const override {
    if (type != kValue) return Decision::kKeep;
    const rocksdb::Slice& holder = where_ == RecordTime::kKeyPrefix ? key : value;
    if (holder.size() < 8) return Decision::kKeep;  // not ours to judge
    if (ReadTime({holder.data(), 8}) >= cutoff_ns_) return Decision::kKeep;
    if (where_ == RecordTime::kKeyPrefix) {
      // Keys sort by time: everything up to the cutoff is expired as well, so
      // the compaction skips it without reading it record by record.
      *skip_until = TimeKey(cutoff_ns_);
      return Decision::kRemoveAndSkipUntil;
    }
    return Decision::kRemove;
  }

  const char* Name() const override { return "hostmesh.RetentionFilter"; }

 private:
  const RecordTime where_;
  const std::int64_t cutoff_ns_;
};

}  // namespace

std::unique_ptr<rocksdb::CompactionFilter> RetentionFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context& /*context*/) {
  const std::int64_t now = clock_.RealtimeNow().time_since_epoch().count();
  const std::int64_t cutoff = now - rule_.retention.count() - rule_.span.count();
  return std::make_unique<RetentionFilter>(rule_.where, cutoff);
}

}  // namespace hostmesh::analyzer::store
