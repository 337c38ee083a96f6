// The value of a raw_results chunk: the probe results of one batch in one
// time bucket, in a compact form. At fleet rate (800,000 results/s) every
// stored byte is paid for in the WAL, its checksum, memtable, compaction and
// disk, and a ProbeResult as protobuf carries five absolute nanosecond times
// (about 75 bytes). Here each result is stored as differences: send time from
// the previous result's, each of the four timestamps from the one before it
// (microseconds apart), the sequence from the previous one of the same NIC
// (usually +1), the port as two bytes, and one flags varint for the timeout,
// the timestamp sources and which fields are set. About 23 bytes a result
// before RocksDB's compression; lossless.
//
//   compact chunk:  0x00 0x02 count(varint) result...
//   result:         flags(varint) src_nic dst_nic (varints) src_port(2, LE)
//                   [dst_port] seq_delta send_delta [t1] [t2] [t3] [t4]
//                   [timestamp_error] [payload_bytes]
//   (deltas are zigzag varints; [x] present when its flag says so)
//
// A batch whose results do not all fit the compact form (an enum value or
// NIC id out of its range, a port above 65535, fields this analyzer does not
// know) is stored as protobuf delimited messages (chunk_codec.h), the format
// chunks had before; the reader takes either. An analyzer older than this
// format cannot read compact chunks.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/net/roce.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::analyzer::store {

// Appends one chunk holding `results`, in the compact form when they all fit it.
void EncodeResultChunk(std::span<const v1::ProbeResult* const> results, std::string& out);

// Walks a chunk of either form without copying it.
class ResultChunkReader {
 public:
  explicit ResultChunkReader(std::string_view chunk);

  // The next result into `out` (every field set or cleared); false at the
  // end of the chunk, or when it is malformed (then corrupt() is true).
  bool Next(v1::ProbeResult& out);
  bool corrupt() const { return corrupt_; }
  bool compact() const { return compact_; }

 private:
  bool NextCompact(v1::ProbeResult& out);

  std::string_view in_;
  bool compact_ = false;
  bool corrupt_ = false;
  std::uint64_t remaining_ = 0;  // compact: results still to read
  // Compact: what the deltas are taken from.
  std::uint64_t prev_send_ = 0;
  std::uint64_t prev_seq_[32] = {};
  std::uint32_t prev_dst_port_ = net::kRoceV2Port;
  std::uint32_t prev_payload_ = 0;
};

}  // namespace hostmesh::analyzer::store
