#include "agent/recorder/recorder_log_tap.h"

#include "common/base/logging.h"

namespace hostmesh::agent::recorder {

RecorderLogTap::RecorderLogTap(FlightRecorder& recorder) {
  SetLogTap([&recorder](std::string_view component, LogLevel level, std::string_view line) {
    recorder.RecordLog(component, LogLevelName(level), line);
  });
}

RecorderLogTap::~RecorderLogTap() {
  SetLogTap({});
}

}  // namespace hostmesh::agent::recorder
