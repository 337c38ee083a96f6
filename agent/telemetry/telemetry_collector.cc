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

// The NIC's devices, and the one its PCI function is read through: the RDMA
// device's, or the netdev's when there is none or it is excluded (both lead
// to the same function); none when telemetry.exclude names the function.
NicDevices DevicesOf(const TelemetryNic& nic, const TelemetryExclude& exclude,
                     std::string* pcie_dir) {
  NicDevices devices{nic.rdma_device, nic.rdma_port, nic.netdev, {}};
  if (exclude.Pcie(nic.rdma_device, nic.netdev)) return devices;
  if (!nic.rdma_device.empty() && !exclude.Device(nic.rdma_device)) {
    devices.pcie_device = nic.rdma_device;
    *pcie_dir = "class/infiniband/" + nic.rdma_device + "/device";
  } else if (!nic.netdev.empty() && !exclude.Device(nic.netdev)) {
    devices.pcie_device = nic.netdev;
    *pcie_dir = "class/net/" + nic.netdev + "/device";
  }
  return devices;
}

std::string Describe(const std::vector<FailedValue>& values) {
  std::string text;
  for (const FailedValue& v : values) {
    if (!text.empty()) text += "; ";
    text += v.item + ": " + std::to_string(v.failures) +
            (v.failures == 1 ? " failed read (" : " failed reads (last: ") + v.error +
            "), next try in " +
            std::to_string(std::chrono::duration_cast<std::chrono::seconds>(v.backoff).count()) +
            " s";
  }
  return text;
}

std::string JoinAll(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

}  // namespace

TelemetryCollector::TelemetryCollector(std::filesystem::path sysfs_root,
                                       std::vector<TelemetryNic> nics, EthtoolStatsSource* ethtool,
                                       CollectorOptions options)
    : sysfs_(std::move(sysfs_root)),
      nics_(std::move(nics)),
      ethtool_(ethtool),
      options_(std::move(options)),
      failure_log_(options_.warn_every),
      pcie_dirs_(nics_.size()),
      previous_(nics_.size()) {
  for (std::size_t i = 0; i < nics_.size(); ++i) {
    guards_.push_back(std::make_unique<NicReadGuard>(
        DevicesOf(nics_[i], options_.exclude, &pcie_dirs_[i]), options_.exclude, options_.period,
        options_.max_backoff, failure_log_));
  }
}

void TelemetryCollector::ReadEthtool(const TelemetryNic& nic, ReadGate& gate, NicReading& reading) {
  if (ethtool_ == nullptr || !gate.MayRead(Source::kEthtool, {})) return;
  std::string error;
  if (!ethtool_->Read(nic.netdev, &scratch_, &error)) {
    ++reading.failures[static_cast<std::size_t>(Source::kEthtool)];
    gate.Done(Source::kEthtool, {}, error.empty() ? std::string("failed") : error);
    return;
  }
  gate.Done(Source::kEthtool, {}, {});
  // The ioctl hands back every statistic at once: an excluded one is dropped here.
  if (!options_.exclude.empty()) {
    std::erase_if(scratch_, [&](const EthtoolStat& stat) {
      return options_.exclude.EthtoolStat(nic.netdev, stat.name);
    });
  }
  MapEthtoolStats(scratch_, reading);
}

NicReading TelemetryCollector::ReadNic(std::size_t index) {
  const TelemetryNic& nic = nics_[index];
  NicReadGuard& gate = *guards_[index];
  NicReading reading;
  if (!nic.rdma_device.empty()) {
    ReadRdmaPort(sysfs_, nic.rdma_device, nic.rdma_port, reading, gate);
  }
  if (!nic.netdev.empty()) {
    ReadNetdev(sysfs_, nic.netdev, reading, gate);
    ReadEthtool(nic, gate, reading);
  }
  // Once per NIC: the RDMA device's PCI function is the netdev's.
  if (!pcie_dirs_[index].empty()) ReadPcie(sysfs_, pcie_dirs_[index], reading, gate);
  return reading;
}

const std::string& TelemetryCollector::NicOf(const std::string& device) const {
  for (const TelemetryNic& nic : nics_) {
    if (nic.rdma_device == device || nic.netdev == device) return nic.name;
  }
  static const std::string kNone = "?";
  return kNone;
}

void TelemetryCollector::LogFailures(MonoTime now) {
  const auto every = std::chrono::duration_cast<std::chrono::minutes>(options_.warn_every);
  for (const DeviceWarning& warning : failure_log_.Due(now)) {
    Log()->warn(
        "telemetry: device {} (NIC {}): {}. Failed values are not read again until a back-off "
        "expires (counted in hostmesh_agent_telemetry_read_failures_total; at most one such line "
        "per device every {} min; telemetry.exclude stops the reads for good)",
        warning.device, NicOf(warning.device), Describe(warning.values), every.count());
  }
  for (std::size_t i = 0; i < nics_.size(); ++i) {
    if (guards_[i]->recovered().empty()) continue;
    Log()->info("telemetry: NIC {}: readable again: {}", nics_[i].name,
                JoinAll(guards_[i]->recovered()));
  }
}

std::optional<TelemetrySample> TelemetryCollector::Sample(MonoTime now, std::int64_t time_ns) {
  // One read per period whoever calls (an early wake-up, a second caller):
  // the devices never see more than the configured rate.
  if (last_read_ && now - *last_read_ < options_.period) return std::nullopt;
  last_read_ = now;
  TelemetrySample sample;
  sample.readings.reserve(nics_.size());
  sample.deltas.resize(nics_.size());
  stats_.backed_off = 0;
  stats_.skipped_reads = 0;
  for (std::size_t i = 0; i < nics_.size(); ++i) {
    guards_[i]->Begin(now);
    NicReading reading = ReadNic(i);
    reading.time_ns = time_ns;
    for (std::size_t s = 0; s < kSourceCount; ++s) stats_.failures[s] += reading.failures[s];
    stats_.backed_off += guards_[i]->backed_off();
    stats_.skipped_reads += guards_[i]->skipped();
    if (previous_[i]) sample.deltas[i] = Diff(*previous_[i], reading);
    previous_[i] = reading;
    sample.readings.push_back(std::move(reading));
  }
  LogFailures(now);
  ++stats_.samples;
  return sample;
}

}  // namespace hostmesh::agent::telemetry
