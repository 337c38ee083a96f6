// The packed results reader (proto/wire/packed_results.h): records of
// varints as an agent sends them (UploadBatch.packed_results), possibly
// hostile. Input: count (2 bytes, big-endian) then the records' bytes. The
// reader must refuse what is malformed without reading past the bytes and
// leave the batch's results as they were; what it reads must pack again to
// records that read back to the very same results.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_check.h"
#include "fuzz/quiet_protobuf_target.h"
#include "proto/wire/packed_results.h"

using namespace hostmesh;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  v1::UploadBatch batch;
  batch.add_results()->set_sequence(7);  // a result the batch already holds
  v1::PackedResults& packed = *batch.mutable_packed_results();
  packed.set_format(wire::kPackedResultsFormat);
  packed.set_count(static_cast<std::uint32_t>(data[0]) << 8 | data[1]);
  packed.set_records(std::string(reinterpret_cast<const char*>(data) + 2, size - 2));
  const std::uint32_t count = packed.count();
  if (wire::ExpandPackedResults(batch, 20'000)) {
    FUZZ_CHECK(batch.results_size() == 1 && batch.results(0).sequence() == 7);
    return 0;
  }
  FUZZ_CHECK(static_cast<std::uint32_t>(batch.results_size()) == count + 1);
  FUZZ_CHECK(!batch.has_packed_results());
  // Each record takes at least 9 bytes.
  FUZZ_CHECK(static_cast<std::size_t>(count) * 9 <= size - 2);
  v1::UploadBatch again;
  std::int64_t previous = 0;
  v1::UploadBatch read = batch;
  read.mutable_results()->DeleteSubrange(0, 1);
  wire::AppendRowsToPacked(read.results(), *again.mutable_packed_results(), previous);
  FUZZ_CHECK(!wire::ExpandPackedResults(again, 20'000));
  FUZZ_CHECK(again.results_size() == read.results_size());
  for (int i = 0; i < read.results_size(); ++i) {
    FUZZ_CHECK(again.results(i).SerializeAsString() == read.results(i).SerializeAsString());
  }
  return 0;
}
