// The store's delimited chunks (analyzer/store/chunk_codec.h) as a scan reads
// them back: path reports, NIC telemetry and (old format) probe results one
// after another, each behind its varint length, and the stored Hello (8-byte
// time, then the AgentHello). The reader must stop at damage without reading
// past the chunk, and what it read must write back to a chunk that reads to
// the same messages.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/store/chunk_codec.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/quiet_protobuf_target.h"
#include "hostmesh/v1/ingest.pb.h"

using namespace hostmesh;
using namespace hostmesh::analyzer::store;

namespace {

template <typename Message>
void ReadChunk(std::string_view chunk) {
  std::vector<Message> items;
  Message item;
  std::string_view in = chunk;
  while (!in.empty()) {
    const std::size_t before = in.size();
    if (!ReadDelimited(in, item)) break;
    FUZZ_CHECK(in.size() < before);
    items.push_back(item);
  }
  std::string again;
  for (const Message& m : items) AppendDelimited(again, m);
  std::string_view back = again;
  for (const Message& m : items) {
    FUZZ_CHECK(ReadDelimited(back, item));
    FUZZ_CHECK(item.SerializeAsString() == m.SerializeAsString());
  }
  FUZZ_CHECK(back.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view chunk(reinterpret_cast<const char*>(data), size);
  ReadChunk<v1::PathReport>(chunk);
  ReadChunk<v1::NicTelemetry>(chunk);
  ReadChunk<v1::ProbeResult>(chunk);
  // The hellos family's value: received_at(8), then the Hello (Store::GetHello).
  if (size >= 8) {
    v1::AgentHello hello;
    (void)hello.ParseFromArray(data + 8, static_cast<int>(size - 8));
  }
  return 0;
}
