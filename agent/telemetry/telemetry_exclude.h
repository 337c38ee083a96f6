#pragma once

// telemetry.exclude: devices and counters the agent never reads. Some
// firmware-restricted functions (DGX and GB200 physical functions) log a
// kernel access error for every read of certain counters; excluding them
// stops the reads, not only the series. Entries, one string each:
//
//   DEVICE                      every value of that RDMA device or netdev
//                               (mlx5_0, eth2): not even its directory is looked at
//   [DEVICE:]counters/NAME      an RDMA port counter file (ports/<p>/counters/NAME),
//   [DEVICE:]hw_counters/NAME   on every RDMA device or on DEVICE only
//   [DEVICE:]ethtool/NAME       an ethtool statistic, on every netdev or on DEVICE
//   [DEVICE:]ethtool            the netdev's ethtool statistics altogether (no ioctl)
//   [DEVICE:]pcie               the PCIe link and AER files of the NIC's PCI function
//
// DEVICE is a NIC's rdma_device or netdev, as configured; "ethtool" and
// "pcie" alone are keywords, not device names. The ioctl returns every
// ethtool statistic at once, so an excluded statistic is dropped, not
// skipped: exclude `DEVICE:ethtool` to stop the ioctl itself. Excluding a
// device only stops its telemetry: probes still use it.
//
// Pure: parsing and matching, no I/O (the config loader and the collector share it).

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hostmesh::agent::telemetry {

enum class ExcludeWhat {
  kDevice,       // device: the RDMA device or netdev; name empty
  kPortCounter,  // name: "counters/NAME" or "hw_counters/NAME"
  kEthtoolStat,  // name: the statistic as the driver spells it
  kEthtool,      // name empty
  kPcie,         // name empty
};

struct ExcludeRule {
  ExcludeWhat what = ExcludeWhat::kDevice;
  std::string device;  // empty: on every device (never for kDevice)
  std::string name;

  friend bool operator==(const ExcludeRule&, const ExcludeRule&) = default;
};

// One entry as written in the config; nullopt with *why set (what is wrong,
// without quoting the entry) when it is not one of the forms above.
std::optional<ExcludeRule> ParseExcludeRule(std::string_view text, std::string* why);
// The entry's canonical spelling: ParseExcludeRule(ToString(r)) == r.
std::string ToString(const ExcludeRule& rule);

// Whether a value may be read; every question is about a configured device name.
class TelemetryExclude {
 public:
  TelemetryExclude() = default;
  explicit TelemetryExclude(std::vector<ExcludeRule> rules) : rules_(std::move(rules)) {}

  bool empty() const { return rules_.empty(); }
  const std::vector<ExcludeRule>& rules() const { return rules_; }

  // The whole device (an RDMA device or a netdev).
  bool Device(std::string_view device) const;
  // `file` of an RDMA port: "hw_counters/out_of_sequence"; true for every
  // file of an excluded device.
  bool PortFile(std::string_view rdma_device, std::string_view file) const;
  // The SIOCETHTOOL statistics of `netdev` (excluded with the netdev too).
  bool Ethtool(std::string_view netdev) const;
  bool EthtoolStat(std::string_view netdev, std::string_view stat) const;
  // The PCI function of the NIC with these devices (either may be empty).
  bool Pcie(std::string_view rdma_device, std::string_view netdev) const;

 private:
  bool Any(ExcludeWhat what, std::string_view device, std::string_view name) const;

  std::vector<ExcludeRule> rules_;
};

}  // namespace hostmesh::agent::telemetry
