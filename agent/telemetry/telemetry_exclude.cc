#include "agent/telemetry/telemetry_exclude.h"

namespace hostmesh::agent::telemetry {
namespace {

// Linux limits: IB_DEVICE_NAME_MAX - 1 (netdevs stop at 15), NAME_MAX, and
// ETH_GSTRING_LEN - 1.
constexpr std::size_t kMaxDevice = 63;
constexpr std::size_t kMaxFile = 255;
constexpr std::size_t kMaxEthtoolStat = 31;

constexpr std::string_view kForms =
    "expected counters/NAME, hw_counters/NAME, ethtool/NAME, ethtool or pcie";

// Why `word` cannot be a device name (`device`: no ':' either) or a counter
// name; nullopt when it can. The word itself is not echoed: the caller
// quotes the whole entry.
std::optional<std::string> CheckWord(std::string_view word, std::string_view what, std::size_t max,
                                     bool device) {
  if (word.empty()) return std::string(what) + " is empty";
  if (word.size() > max) {
    return std::string(what) + " is longer than " + std::to_string(max) + " characters";
  }
  for (const char c : word) {
    // Printable ASCII but space; '/' would be a path, ':' separates the device.
    if (c <= ' ' || c > '~' || c == '/' || (device && c == ':')) {
      return std::string(what) +
             (device ? " may hold no space, '/', ':'" : " may hold no space, '/'") +
             " or non-ASCII character";
    }
  }
  return std::nullopt;
}

std::optional<ExcludeRule> Refuse(std::string* why, std::string message) {
  *why = std::move(message);
  return std::nullopt;
}

// `what` after the device (if any): a counter file or an ethtool statistic.
std::optional<ExcludeRule> ParseCounter(ExcludeRule rule, std::string_view what, std::string* why) {
  const std::size_t slash = what.find('/');
  const std::string_view source = what.substr(0, slash);
  const std::string_view name = what.substr(slash + 1);
  if (source == "counters" || source == "hw_counters") {
    if (auto bad = CheckWord(name, "the counter file name", kMaxFile, false)) {
      return Refuse(why, *bad);
    }
    rule.what = ExcludeWhat::kPortCounter;
    rule.name = what;
    return rule;
  }
  if (source == "ethtool") {
    if (auto bad = CheckWord(name, "the ethtool statistic name", kMaxEthtoolStat, false)) {
      return Refuse(why, *bad);
    }
    rule.what = ExcludeWhat::kEthtoolStat;
    rule.name = name;
    return rule;
  }
  return Refuse(why, "unknown source before '/': expected counters/, hw_counters/ or ethtool/");
}

}  // namespace

std::optional<ExcludeRule> ParseExcludeRule(std::string_view text, std::string* why) {
  ExcludeRule rule;
  std::string_view what = text;
  // Device names hold no ':' (the kernel refuses them), statistic names may.
  const std::size_t colon = text.find(':');
  const bool has_device = colon != std::string_view::npos && colon < text.find('/');
  if (has_device) {
    rule.device = text.substr(0, colon);
    what = text.substr(colon + 1);
    if (auto bad = CheckWord(rule.device, "the device name", kMaxDevice, true)) {
      return Refuse(why, *bad);
    }
    if (what.empty()) return Refuse(why, "nothing after the device's ':': " + std::string(kForms));
  }
  if (what == "ethtool") {
    rule.what = ExcludeWhat::kEthtool;
    return rule;
  }
  if (what == "pcie") {
    rule.what = ExcludeWhat::kPcie;
    return rule;
  }
  if (what.find('/') != std::string_view::npos) return ParseCounter(std::move(rule), what, why);
  if (has_device) return Refuse(why, std::string(kForms) + " after the device's ':'");
  if (auto bad = CheckWord(what, "the device name", kMaxDevice, true)) return Refuse(why, *bad);
  rule.what = ExcludeWhat::kDevice;
  rule.device = what;
  return rule;
}

std::string ToString(const ExcludeRule& rule) {
  if (rule.what == ExcludeWhat::kDevice) return rule.device;
  std::string text = rule.device.empty() ? std::string() : rule.device + ":";
  switch (rule.what) {
    case ExcludeWhat::kPortCounter:
      return text + rule.name;
    case ExcludeWhat::kEthtoolStat:
      return text + "ethtool/" + rule.name;
    case ExcludeWhat::kEthtool:
      return text + "ethtool";
    case ExcludeWhat::kPcie:
    case ExcludeWhat::kDevice:
      break;
  }
  return text + "pcie";
}

bool TelemetryExclude::Any(ExcludeWhat what, std::string_view device, std::string_view name) const {
  for (const ExcludeRule& rule : rules_) {
    if (rule.what == what && (rule.device.empty() || rule.device == device) && rule.name == name) {
      return true;
    }
  }
  return false;
}

bool TelemetryExclude::Device(std::string_view device) const {
  return !device.empty() && Any(ExcludeWhat::kDevice, device, "");
}

bool TelemetryExclude::PortFile(std::string_view rdma_device, std::string_view file) const {
  return Device(rdma_device) || Any(ExcludeWhat::kPortCounter, rdma_device, file);
}

bool TelemetryExclude::Ethtool(std::string_view netdev) const {
  return Device(netdev) || Any(ExcludeWhat::kEthtool, netdev, "");
}

bool TelemetryExclude::EthtoolStat(std::string_view netdev, std::string_view stat) const {
  return Any(ExcludeWhat::kEthtoolStat, netdev, stat);
}

bool TelemetryExclude::Pcie(std::string_view rdma_device, std::string_view netdev) const {
  for (const ExcludeRule& rule : rules_) {
    if (rule.what != ExcludeWhat::kPcie) continue;
    if (rule.device.empty()) return true;
    if ((!rdma_device.empty() && rule.device == rdma_device) ||
        (!netdev.empty() && rule.device == netdev)) {
      return true;
    }
  }
  return false;
}

}  // namespace hostmesh::agent::telemetry
