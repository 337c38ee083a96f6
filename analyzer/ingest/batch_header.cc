#include "analyzer/ingest/batch_header.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <climits>
#include <string>

namespace hostmesh::analyzer::ingest {
namespace {

using google::protobuf::internal::WireFormatLite;

// Past the longest name the analyzer accepts (kMaxNameBytes, 253).
constexpr std::uint32_t kKeptIdBytes = 257;

constexpr int kSchemaVersion = v1::UploadBatch::kSchemaVersionFieldNumber;
constexpr int kAgentId = v1::UploadBatch::kAgentIdFieldNumber;
constexpr int kBootId = v1::UploadBatch::kBootIdFieldNumber;
constexpr int kBatchSeq = v1::UploadBatch::kBatchSeqFieldNumber;

}  // namespace

bool ReadBatchHeader(google::protobuf::io::ZeroCopyInputStream& in, v1::UploadBatch& header) {
  google::protobuf::io::CodedInputStream stream(&in);
  stream.SetTotalBytesLimit(INT_MAX);
  for (;;) {
    const std::uint32_t tag = stream.ReadTag();
    if (tag == 0) return stream.ConsumedEntireMessage();
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    const bool varint = WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_VARINT;
    const bool bytes =
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    std::uint64_t value = 0;
    if (varint && (field == kSchemaVersion || field == kBootId || field == kBatchSeq)) {
      if (!stream.ReadVarint64(&value)) return false;
      if (field == kSchemaVersion) {
        header.set_schema_version(static_cast<v1::SchemaVersion>(static_cast<int>(value)));
      } else if (field == kBootId) {
        header.set_boot_id(value);
      } else {
        header.set_batch_seq(value);
      }
    } else if (bytes && field == kAgentId) {
      std::uint32_t length = 0;
      if (!stream.ReadVarint32(&length) || length > INT_MAX) return false;
      std::string id;
      if (!stream.ReadString(&id, static_cast<int>(std::min(length, kKeptIdBytes)))) return false;
      if (length > kKeptIdBytes && !stream.Skip(static_cast<int>(length - kKeptIdBytes))) {
        return false;
      }
      header.set_agent_id(std::move(id));
    } else if (!WireFormatLite::SkipField(&stream, tag)) {
      return false;
    }
  }
}

}  // namespace hostmesh::analyzer::ingest
