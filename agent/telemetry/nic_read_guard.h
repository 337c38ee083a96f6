#pragma once

// One NIC's ReadGate in the collector: holds back what telemetry.exclude
// names and every value whose back-off (read_backoff.h) runs after a failed
// read, and tells the ReadFailureLog of failures and recoveries under the
// device the value belongs to (the RDMA device, or the netdev for netdev and
// ethtool values, or the device the PCI function is read through).

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agent/telemetry/read_backoff.h"
#include "agent/telemetry/read_failure_log.h"
#include "agent/telemetry/read_gate.h"
#include "agent/telemetry/telemetry_exclude.h"
#include "common/base/clock.h"

namespace hostmesh::agent::telemetry {

struct NicDevices {
  std::string rdma_device;  // empty: none
  std::uint32_t rdma_port = 1;
  std::string netdev;       // empty: none
  std::string pcie_device;  // the one of the two its PCI function is read through
};

class NicReadGuard final : public ReadGate {
 public:
  // `exclude` and `log` must outlive the guard. A failed value waits
  // `first_backoff`, doubling per failure up to `max_backoff`.
  NicReadGuard(NicDevices devices, const TelemetryExclude& exclude,
               std::chrono::nanoseconds first_backoff, std::chrono::nanoseconds max_backoff,
               ReadFailureLog& log);

  // A sample starts at `now`.
  void Begin(MonoTime now);

  bool MayRead(Source source, std::string_view item) override;
  void Done(Source source, std::string_view item, std::string_view error) override;

  std::size_t backed_off() const;                     // values in back-off now
  std::uint64_t skipped() const { return skipped_; }  // reads a back-off held back
  // Values a warning named that read fine in this sample ("mlx5_0 ports/1/state").
  const std::vector<std::string>& recovered() const { return recovered_; }

 private:
  bool Excluded(Source source, std::string_view item) const;
  const std::string& DeviceOf(Source source) const;
  // The value as the log names it, relative to its device's sysfs directory.
  std::string Label(Source source, std::string_view item) const;

  NicDevices devices_;
  const TelemetryExclude& exclude_;
  std::chrono::nanoseconds first_backoff_;
  std::chrono::nanoseconds max_backoff_;
  ReadFailureLog& log_;
  MonoTime now_{};
  // Per source, the values whose last read failed, by item.
  std::array<std::map<std::string, ReadBackoff, std::less<>>, kSourceCount> backoffs_;
  std::uint64_t skipped_ = 0;
  std::vector<std::string> recovered_;
};

}  // namespace hostmesh::agent::telemetry
