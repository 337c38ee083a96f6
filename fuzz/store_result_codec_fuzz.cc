// The raw_results chunk reader (analyzer/store/result_codec.h): compact or
// delimited chunks as RocksDB hands them back, possibly damaged. The reader
// must stop on damage (corrupt()) without reading past the chunk; the
// results of a chunk read whole must encode again to a chunk that reads back
// to the very same results.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/store/result_codec.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/quiet_protobuf_target.h"

using namespace hostmesh;
using namespace hostmesh::analyzer::store;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ResultChunkReader reader(std::string_view(reinterpret_cast<const char*>(data), size));
  std::vector<v1::ProbeResult> results;
  v1::ProbeResult r;
  while (reader.Next(r)) {
    results.push_back(r);
    FUZZ_CHECK(results.size() <= size);  // each result takes at least a byte
  }
  if (reader.corrupt() || results.empty()) return 0;
  std::vector<const v1::ProbeResult*> pointers;
  for (const v1::ProbeResult& each : results) pointers.push_back(&each);
  std::string chunk;
  EncodeResultChunk(pointers, chunk);
  ResultChunkReader again(chunk);
  for (const v1::ProbeResult& each : results) {
    FUZZ_CHECK(again.Next(r));
    FUZZ_CHECK(r.SerializeAsString() == each.SerializeAsString());
  }
  FUZZ_CHECK(!again.Next(r) && !again.corrupt());
  return 0;
}
