#pragma once

// What to warn about a device's failed reads, and when: at most one warn
// line per device per `every` (an hour in the agent), naming each value that
// failed since the device's last line, how often, and the last error. A
// value that fails on every read would otherwise log once per sample; one
// that fails and reads fine again before its device's line is due is only
// counted (in the metrics). Once a line named a value, its recovery is worth
// an info line (Recovered says so).
//
// Pure: no logging, time passed in.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/clock.h"

namespace hostmesh::agent::telemetry {

struct FailedValue {
  std::string item;                     // "ports/1/hw_counters/out_of_sequence"
  std::string error;                    // of the last failed read
  std::uint64_t failures = 0;           // failed reads since the device's last line
  std::chrono::nanoseconds backoff{0};  // not read again for this long
};

struct DeviceWarning {
  std::string device;
  std::vector<FailedValue> values;  // by item
};

class ReadFailureLog {
 public:
  explicit ReadFailureLog(std::chrono::nanoseconds every) : every_(every) {}

  void Failed(std::string_view device, std::string_view item, std::string_view error,
              std::chrono::nanoseconds backoff);
  // `item` read fine again: true when a warning had named its failure (log
  // that it recovered); it is forgotten either way.
  bool Recovered(std::string_view device, std::string_view item);
  // One warning per device with failures since its last line, unless that
  // line is less than `every` old; the values named are then marked as told.
  std::vector<DeviceWarning> Due(MonoTime now);

 private:
  struct Value {
    std::string error;
    std::uint64_t failures = 0;  // since the last line
    std::chrono::nanoseconds backoff{0};
    bool warned = false;  // a line named this failure
  };
  struct Device {
    std::map<std::string, Value, std::less<>> values;  // failing now
    std::optional<MonoTime> warned_at;
  };

  std::chrono::nanoseconds every_;
  std::map<std::string, Device, std::less<>> devices_;
};

}  // namespace hostmesh::agent::telemetry
