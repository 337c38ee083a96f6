// The header of an UploadBatch (schema version, agent id, boot id, sequence)
// read by walking its fields without parsing its items. A message over the
// batch size limit is refused whatever it holds; parsing a hostile peer's
// 8 MiB batch of results costs about 40 ms of CPU, walking its fields about
// one. With the header the refusal is the same REJECTED ack (or the same
// denial) a full parse would have led to.
#pragma once

#include <google/protobuf/io/zero_copy_stream.h>

#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::analyzer::ingest {

// Fills `header` with the header fields of the UploadBatch encoded in `in`
// (items left empty). An agent id longer than any the analyzer accepts
// (kMaxNameBytes) is kept at 257 bytes: still too long, never cut down to
// another agent's id.
// False when the bytes are not protobuf wire format.
bool ReadBatchHeader(google::protobuf::io::ZeroCopyInputStream& in, v1::UploadBatch& header);

}  // namespace hostmesh::analyzer::ingest
