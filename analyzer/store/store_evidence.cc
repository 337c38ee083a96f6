// The store's evidence family (store.h, "The evidence of incidents"):
// incident_id(8) part(4) -> written_at(8) bytes.
#include <algorithm>

#include "analyzer/store/rocks_values.h"
#include "analyzer/store/store.h"
#include "analyzer/store/store_keys.h"

namespace hostmesh::analyzer::store {

StoreStatus Store::PutEvidence(std::uint64_t incident_id, std::uint32_t part,
                               std::string_view bytes) {
  std::string value;
  value.reserve(8 + bytes.size());
  AppendTime(value, Ns(clock_.RealtimeNow()));
  value.append(bytes);
  return FromRocks(
      db_->Put(rocksdb::WriteOptions(), cf(kEvidence), EvidenceKey(incident_id, part), value),
      "store evidence");
}

StoreStatus Store::ScanEvidence(
    std::uint64_t incident_id,
    const std::function<bool(std::uint32_t, std::string_view)>& visit) const {
  const std::string prefix = EvidenceKey(incident_id, 0).substr(0, 8);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf(kEvidence)));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    const std::string_view key = ToView(it->key());
    const std::string_view value = ToView(it->value());
    if (key.size() != 12 || value.size() < 8) continue;  // not ours: skip, never crash a read
    if (!visit(ReadU32(key.substr(8)), value.substr(8))) break;
  }
  return FromRocks(it->status(), "scan evidence");
}

StoreStatus Store::ScanEvidenceSizes(
    const std::function<bool(std::uint64_t, std::uint64_t, WallTime)>& visit) const {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf(kEvidence)));
  std::uint64_t id = 0;
  std::uint64_t bytes = 0;
  std::int64_t written = 0;
  bool any = false;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view key = ToView(it->key());
    const std::string_view value = ToView(it->value());
    if (key.size() != 12 || value.size() < 8) continue;
    const std::uint64_t key_id = ReadU64(key);
    if (any && key_id != id) {
      if (!visit(id, bytes, WallTime{std::chrono::nanoseconds{written}})) return {};
      bytes = 0;
      written = 0;
    }
    any = true;
    id = key_id;
    bytes += key.size() + value.size();
    written = std::max(written, ReadTime(value));
  }
  if (any && it->status().ok()) visit(id, bytes, WallTime{std::chrono::nanoseconds{written}});
  return FromRocks(it->status(), "scan evidence sizes");
}

StoreStatus Store::DeleteEvidence(std::uint64_t incident_id) {
  return FromRocks(db_->DeleteRange(rocksdb::WriteOptions(), cf(kEvidence),
                                    EvidenceKey(incident_id, 0), EvidenceKey(incident_id + 1, 0)),
                   "delete evidence");
}

}  // namespace hostmesh::analyzer::store
