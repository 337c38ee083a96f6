// Targets that parse protobuf: its log lines on every malformed input (UTF-8
// in string fields, say) would flood the fuzzer's output and slow it down.
#pragma once

#include <google/protobuf/stubs/logging.h>

// Call from LLVMFuzzerInitialize.
inline void QuietProtobuf() {
  google::protobuf::SetLogHandler(nullptr);
}
