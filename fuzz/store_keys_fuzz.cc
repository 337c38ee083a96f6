// The store's key readers (analyzer/store/store_keys.h): a key read back from
// RocksDB may be damaged or from another version. A chunk key that parses must
// be rebuilt byte for byte from its parts; the fixed-width readers are given
// only what the store's own callers check for (8 bytes of time, a ledger key).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analyzer/store/store_keys.h"
#include "fuzz/fuzz_check.h"

using namespace hostmesh::analyzer::store;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view key(reinterpret_cast<const char*>(data), size);
  if (const auto parts = ParseChunkKey(key)) {
    FUZZ_CHECK(parts->agent_id.size() <= key.size());
    FUZZ_CHECK(BucketStart(parts->bucket_ns) <= parts->bucket_ns);
    if (parts->agent_id.size() <= kMaxAgentIdBytes) {
      FUZZ_CHECK(ChunkKey(parts->bucket_ns, parts->agent_id, parts->boot_id, parts->batch_seq) ==
                 key);
    }
  }
  if (const auto parts = ParseFlightRecordKey(key)) {
    if (parts->agent_id.size() <= kMaxAgentIdBytes) {
      FUZZ_CHECK(FlightRecordKey(parts->incident_id, parts->agent_id, parts->boot_id,
                                 parts->batch_seq) == key);
    }
  }
  (void)LedgerKeySeq(key);
  if (key.size() >= 8) {
    const std::int64_t t = ReadTime(key);
    FUZZ_CHECK(TimeKey(t) == key.substr(0, 8));
    const std::int64_t bucket = BucketStart(t);
    FUZZ_CHECK(bucket <= t && t - bucket < kRawBucket.count());
    (void)ReadU64(key);
    (void)ReadU32(key);
  }
  return 0;
}
