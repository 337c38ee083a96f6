#include "agent/telemetry/read_failure_log.h"

#include <utility>

namespace hostmesh::agent::telemetry {

void ReadFailureLog::Failed(std::string_view device, std::string_view item, std::string_view error,
                            std::chrono::nanoseconds backoff) {
  auto d = devices_.find(device);
  if (d == devices_.end()) d = devices_.emplace(std::string(device), Device{}).first;
  auto v = d->second.values.find(item);
  if (v == d->second.values.end()) v = d->second.values.emplace(std::string(item), Value{}).first;
  v->second.error = error;
  v->second.backoff = backoff;
  ++v->second.failures;
}

bool ReadFailureLog::Recovered(std::string_view device, std::string_view item) {
  const auto d = devices_.find(device);
  if (d == devices_.end()) return false;
  const auto v = d->second.values.find(item);
  if (v == d->second.values.end()) return false;
  const bool warned = v->second.warned;
  d->second.values.erase(v);
  return warned;
}

std::vector<DeviceWarning> ReadFailureLog::Due(MonoTime now) {
  std::vector<DeviceWarning> due;
  for (auto& [name, device] : devices_) {
    if (device.warned_at && now < *device.warned_at + every_) continue;
    DeviceWarning warning{name, {}};
    for (auto& [item, value] : device.values) {
      if (value.failures == 0) continue;  // told already, not read since
      warning.values.push_back({item, value.error, value.failures, value.backoff});
      value.failures = 0;
      value.warned = true;
    }
    if (warning.values.empty()) continue;
    device.warned_at = now;
    due.push_back(std::move(warning));
  }
  return due;
}

}  // namespace hostmesh::agent::telemetry
