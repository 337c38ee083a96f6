#pragma once

// Warn+ log lines into a FlightRecorder (common/base/logging.h's tap), for
// as long as this object lives.

#include "agent/recorder/flight_recorder.h"

namespace hostmesh::agent::recorder {

class RecorderLogTap {
 public:
  explicit RecorderLogTap(FlightRecorder& recorder);
  ~RecorderLogTap();
  RecorderLogTap(const RecorderLogTap&) = delete;
  RecorderLogTap& operator=(const RecorderLogTap&) = delete;
};

}  // namespace hostmesh::agent::recorder
