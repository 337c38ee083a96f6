// Small conversions between RocksDB's types and the store's, shared by the
// store's source files.
#pragma once

#include <rocksdb/slice.h>
#include <rocksdb/status.h>

#include <string>
#include <string_view>

#include "analyzer/store/store.h"
#include "common/base/clock.h"

namespace hostmesh::analyzer::store {

inline std::int64_t Ns(WallTime t) {
  return t.time_since_epoch().count();
}
inline rocksdb::Slice ToSlice(std::string_view s) {
  return {s.data(), s.size()};
}
inline std::string_view ToView(const rocksdb::Slice& s) {
  return {s.data(), s.size()};
}
inline StoreStatus FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return {};
  return {std::string(what) + ": " + s.ToString()};
}

}  // namespace hostmesh::analyzer::store
