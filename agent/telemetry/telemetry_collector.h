#pragma once

// Reads every configured NIC's counters and state (sysfs and ethtool) and
// turns consecutive reads into deltas. Synchronous and single-threaded: the
// agent calls Sample() from its telemetry thread; tests call it on a fake
// sysfs tree with a fake ethtool source, with the time they choose.
//
// Safe on every NIC: what telemetry.exclude names is never read; a missing
// device or unreadable value is counted, never an error, and is not read
// again until its back-off expires (read_backoff.h: a period, doubling up to
// an hour, reset by a good read); at most one warn line per device per hour
// names what failed (read_failure_log.h); and nothing reads more often than
// once per period, whoever calls.

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/telemetry/ethtool_stats.h"
#include "agent/telemetry/nic_read_guard.h"
#include "agent/telemetry/nic_reading.h"
#include "agent/telemetry/read_failure_log.h"
#include "agent/telemetry/sysfs_tree.h"
#include "agent/telemetry/telemetry_exclude.h"
#include "common/base/clock.h"

namespace hostmesh::agent::telemetry {

struct TelemetryNic {
  std::string name;         // the agent's NIC name, for logs
  std::string netdev;       // empty: no netdev counters, no ethtool
  std::string rdma_device;  // empty: no RDMA port counters
  std::uint32_t rdma_port = 1;
};

struct CollectorOptions {
  // At most one read per period (telemetry.period); also the first back-off
  // of a value whose read failed.
  std::chrono::nanoseconds period = std::chrono::seconds{10};
  std::chrono::nanoseconds max_backoff = std::chrono::hours{1};
  // At most one warn line per device this often.
  std::chrono::nanoseconds warn_every = std::chrono::hours{1};
  TelemetryExclude exclude;
};

struct TelemetryStats {
  std::uint64_t samples = 0;
  std::array<std::uint64_t, kSourceCount> failures{};  // summed over samples and NICs
  std::uint64_t backed_off = 0;                        // values whose last read failed, now
  std::uint64_t skipped_reads = 0;                     // reads a back-off held back, since start
};

struct TelemetrySample {
  std::vector<NicReading> readings;             // per NIC, in configuration order
  std::vector<std::optional<NicDelta>> deltas;  // per NIC; none on the first sample
};

class TelemetryCollector {
 public:
  // `ethtool` may be null (no ethtool statistics) and must outlive the collector.
  TelemetryCollector(std::filesystem::path sysfs_root, std::vector<TelemetryNic> nics,
                     EthtoolStatsSource* ethtool, CollectorOptions options = {});
  TelemetryCollector(const TelemetryCollector&) = delete;
  TelemetryCollector& operator=(const TelemetryCollector&) = delete;

  // Reads every NIC at monotonic `now` (back-offs, the rate limit) and stamps
  // the readings with `time_ns` (realtime). Nullopt, reading nothing, when
  // less than a period has passed since the last read.
  std::optional<TelemetrySample> Sample(MonoTime now, std::int64_t time_ns);

  const TelemetryStats& stats() const { return stats_; }
  const std::vector<TelemetryNic>& nics() const { return nics_; }

 private:
  NicReading ReadNic(std::size_t index);
  void ReadEthtool(const TelemetryNic& nic, ReadGate& gate, NicReading& reading);
  void LogFailures(MonoTime now);
  const std::string& NicOf(const std::string& device) const;

  SysfsTree sysfs_;
  std::vector<TelemetryNic> nics_;
  EthtoolStatsSource* ethtool_;
  CollectorOptions options_;
  ReadFailureLog failure_log_;
  std::vector<std::string> pcie_dirs_;  // per NIC; empty: not read
  // Per NIC; they refer to options_.exclude and failure_log_.
  std::vector<std::unique_ptr<NicReadGuard>> guards_;
  std::vector<std::optional<NicReading>> previous_;
  std::optional<MonoTime> last_read_;
  std::vector<EthtoolStat> scratch_;
  TelemetryStats stats_;
};

}  // namespace hostmesh::agent::telemetry
