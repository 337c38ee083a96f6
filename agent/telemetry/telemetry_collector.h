#pragma once

// Reads every configured NIC's counters and state (sysfs and ethtool) and
// turns consecutive reads into deltas. Synchronous and single-threaded: the
// agent calls Sample() from its telemetry thread; tests call it on a fake
// sysfs tree with a fake ethtool source. A missing device or unreadable file
// is counted and logged (once per NIC and source until it recovers), never
// an error.

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/telemetry/ethtool_stats.h"
#include "agent/telemetry/nic_reading.h"
#include "agent/telemetry/sysfs_tree.h"

namespace hostmesh::agent::telemetry {

struct TelemetryNic {
  std::string name;         // the agent's NIC name, for logs
  std::string netdev;       // empty: no netdev counters, no ethtool
  std::string rdma_device;  // empty: no RDMA port counters
  std::uint32_t rdma_port = 1;
};

struct TelemetryStats {
  std::uint64_t samples = 0;
  std::array<std::uint64_t, kSourceCount> failures{};  // summed over samples and NICs
};

struct TelemetrySample {
  std::vector<NicReading> readings;             // per NIC, in configuration order
  std::vector<std::optional<NicDelta>> deltas;  // per NIC; none on the first sample
};

class TelemetryCollector {
 public:
  // `ethtool` may be null (no ethtool statistics) and must outlive the collector.
  TelemetryCollector(std::filesystem::path sysfs_root, std::vector<TelemetryNic> nics,
                     EthtoolStatsSource* ethtool);

  // Reads every NIC now; `time_ns` (realtime) stamps the readings.
  TelemetrySample Sample(std::int64_t time_ns);

  const TelemetryStats& stats() const { return stats_; }
  const std::vector<TelemetryNic>& nics() const { return nics_; }

 private:
  NicReading ReadNic(std::size_t index, std::int64_t time_ns);
  void NoteFailures(std::size_t index, const NicReading& reading);

  SysfsTree sysfs_;
  std::vector<TelemetryNic> nics_;
  EthtoolStatsSource* ethtool_;
  std::vector<std::optional<NicReading>> previous_;
  // Per NIC and source: failing in the last sample, so each episode logs once.
  std::vector<std::array<bool, kSourceCount>> failing_;
  std::vector<std::string> ethtool_errors_;  // last error per NIC, for the log
  std::vector<EthtoolStat> scratch_;
  TelemetryStats stats_;
};

}  // namespace hostmesh::agent::telemetry
