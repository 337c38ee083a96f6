#include "agent/telemetry/nic_read_guard.h"

#include <utility>

namespace hostmesh::agent::telemetry {
namespace {

std::size_t Index(Source source) {
  return static_cast<std::size_t>(source);
}

}  // namespace

NicReadGuard::NicReadGuard(NicDevices devices, const TelemetryExclude& exclude,
                           std::chrono::nanoseconds first_backoff,
                           std::chrono::nanoseconds max_backoff, ReadFailureLog& log)
    : devices_(std::move(devices)),
      exclude_(exclude),
      first_backoff_(first_backoff),
      max_backoff_(max_backoff),
      log_(log) {}

void NicReadGuard::Begin(MonoTime now) {
  now_ = now;
  recovered_.clear();
}

bool NicReadGuard::Excluded(Source source, std::string_view item) const {
  switch (source) {
    case Source::kRdma:
      return item.empty() ? exclude_.Device(devices_.rdma_device)
                          : exclude_.PortFile(devices_.rdma_device, item);
    case Source::kNetdev:
      return exclude_.Device(devices_.netdev);
    case Source::kEthtool:
      return exclude_.Ethtool(devices_.netdev);
    case Source::kPcie:
      break;  // the collector does not read an excluded PCI function at all
  }
  return false;
}

bool NicReadGuard::MayRead(Source source, std::string_view item) {
  if (Excluded(source, item)) return false;
  const auto& backoffs = backoffs_[Index(source)];
  const auto it = backoffs.find(item);
  if (it == backoffs.end() || it->second.Due(now_)) return true;
  ++skipped_;
  return false;
}

void NicReadGuard::Done(Source source, std::string_view item, std::string_view error) {
  auto& backoffs = backoffs_[Index(source)];
  auto it = backoffs.find(item);
  if (!error.empty()) {
    if (it == backoffs.end()) {
      it = backoffs.emplace(std::string(item), ReadBackoff(first_backoff_, max_backoff_)).first;
    }
    it->second.Failed(now_);
    log_.Failed(DeviceOf(source), Label(source, item), error, it->second.delay());
    return;
  }
  if (it == backoffs.end()) return;
  backoffs.erase(it);
  std::string label = Label(source, item);
  if (log_.Recovered(DeviceOf(source), label)) {
    recovered_.push_back(DeviceOf(source) + " " + std::move(label));
  }
}

std::size_t NicReadGuard::backed_off() const {
  std::size_t n = 0;
  for (const auto& backoffs : backoffs_) n += backoffs.size();
  return n;
}

const std::string& NicReadGuard::DeviceOf(Source source) const {
  switch (source) {
    case Source::kRdma:
      return devices_.rdma_device;
    case Source::kNetdev:
    case Source::kEthtool:
      return devices_.netdev;
    case Source::kPcie:
      break;
  }
  return devices_.pcie_device;
}

std::string NicReadGuard::Label(Source source, std::string_view item) const {
  switch (source) {
    case Source::kRdma: {
      std::string label = "ports/" + std::to_string(devices_.rdma_port);
      if (!item.empty()) label.append("/").append(item);
      return label;
    }
    case Source::kNetdev:
      return item.empty() ? std::string("netdev") : std::string(item);
    case Source::kEthtool:
      return "ethtool statistics";
    case Source::kPcie:
      break;
  }
  return item == "link" ? std::string("PCIe link") : "device/" + std::string(item);
}

}  // namespace hostmesh::agent::telemetry
