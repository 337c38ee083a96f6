// For a target whose only set-up is QuietProtobuf: including this header
// gives it its LLVMFuzzerInitialize. Include it from the target's one source
// file only (a target with more set-up calls QuietProtobuf itself).
#pragma once

#include "fuzz/protobuf_quiet.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  QuietProtobuf();
  return 0;
}
