#include "agent/telemetry/telemetry_collector.h"

#include <utility>

#include "agent/telemetry/sysfs_readers.h"
#include "common/base/logging.h"

namespace hostmesh::agent::telemetry {
namespace {

std::shared_ptr<spdlog::logger> Log() {
  static const auto log = GetLogger("telemetry");
  return log;
}

}  // namespace

TelemetryCollector::TelemetryCollector(std::filesystem::path sysfs_root,
                                       std::vector<TelemetryNic> nics, EthtoolStatsSource* ethtool)
    : sysfs_(std::move(sysfs_root)),
      nics_(std::move(nics)),
      ethtool_(ethtool),
      previous_(nics_.size()),
      failing_(nics_.size()),
      ethtool_errors_(nics_.size()) {}

NicReading TelemetryCollector::ReadNic(std::size_t index, std::int64_t time_ns) {
  const TelemetryNic& nic = nics_[index];
  NicReading reading;
  reading.time_ns = time_ns;
  if (!nic.rdma_device.empty()) {
    ReadRdmaPort(sysfs_, nic.rdma_device, nic.rdma_port, reading);
    ReadPcie(sysfs_, "class/infiniband/" + nic.rdma_device + "/device", reading);
  }
  if (!nic.netdev.empty()) {
    ReadNetdev(sysfs_, nic.netdev, reading);
    // The RDMA device's PCI function is the netdev's: read it once.
    if (nic.rdma_device.empty()) ReadPcie(sysfs_, "class/net/" + nic.netdev + "/device", reading);
    if (ethtool_ != nullptr) {
      std::string error;
      if (ethtool_->Read(nic.netdev, &scratch_, &error)) {
        MapEthtoolStats(scratch_, reading);
      } else {
        ++reading.failures[static_cast<std::size_t>(Source::kEthtool)];
        ethtool_errors_[index] = std::move(error);
      }
    }
  }
  return reading;
}

void TelemetryCollector::NoteFailures(std::size_t index, const NicReading& reading) {
  for (std::size_t s = 0; s < kSourceCount; ++s) {
    const std::uint32_t failures = reading.failures[s];
    stats_.failures[s] += failures;
    const bool failing = failures > 0;
    if (failing == failing_[index][s]) continue;
    failing_[index][s] = failing;
    const TelemetryNic& nic = nics_[index];
    const std::string_view source = SourceName(static_cast<Source>(s));
    if (failing) {
      const std::string& why = static_cast<Source>(s) == Source::kEthtool
                                   ? ethtool_errors_[index]
                                   : std::string("missing device or unreadable files");
      Log()->warn(
          "telemetry: NIC {} (netdev '{}', rdma '{}'): {} values could not be read: {} "
          "(counted in hostmesh_agent_telemetry_read_failures_total{{source=\"{}\"}})",
          nic.name, nic.netdev, nic.rdma_device, failures, why, source);
    } else {
      Log()->info("telemetry: NIC {}: {} values readable again", nic.name, source);
    }
  }
}

TelemetrySample TelemetryCollector::Sample(std::int64_t time_ns) {
  TelemetrySample sample;
  sample.readings.reserve(nics_.size());
  sample.deltas.resize(nics_.size());
  for (std::size_t i = 0; i < nics_.size(); ++i) {
    NicReading reading = ReadNic(i, time_ns);
    NoteFailures(i, reading);
    if (previous_[i]) sample.deltas[i] = Diff(*previous_[i], reading);
    previous_[i] = reading;
    sample.readings.push_back(std::move(reading));
  }
  ++stats_.samples;
  return sample;
}

}  // namespace hostmesh::agent::telemetry
