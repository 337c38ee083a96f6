// The value of a raw_results / path_reports chunk: messages one after another,
// each preceded by its length as a varint (protobuf's "delimited" framing), so
// a reader walks a chunk without an index and without copying it.
#pragma once

#include <google/protobuf/message_lite.h>

#include <string>
#include <string_view>

namespace hostmesh::analyzer::store {

void AppendDelimited(std::string& out, const google::protobuf::MessageLite& message);

// Reads the message at the front of `in` into `message` and drops it from
// `in`. False when `in` is empty or malformed.
bool ReadDelimited(std::string_view& in, google::protobuf::MessageLite& message);

}  // namespace hostmesh::analyzer::store
