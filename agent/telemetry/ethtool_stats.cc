#include "agent/telemetry/ethtool_stats.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace hostmesh::agent::telemetry {
namespace {

// Driver spellings of the counters we read. mlx5: Documentation/networking/
// device_drivers/ethernet/mellanox/mlx5/counters.rst; bnxt_en: bnxt_ethtool.c;
// rx_crc_errors is the spelling of many others (ixgbe, igb, ...). The first
// name found in a driver's list wins, so one counter is never read twice.
struct NamedCounter {
  NicCounter counter;
  std::array<std::string_view, 3> names;
};
constexpr NamedCounter kNamed[] = {
    {NicCounter::kLinkDownEvents, {"link_down_events_phy", "", ""}},
    {NicCounter::kRxDiscardsPhy, {"rx_discards_phy", "", ""}},
    {NicCounter::kRxOutOfBuffer, {"rx_out_of_buffer", "", ""}},
    {NicCounter::kRxSymbolErrors, {"rx_pcs_symbol_err_phy", "rx_pcs_symbol_err", ""}},
    {NicCounter::kRxFcsErrors, {"rx_crc_errors_phy", "rx_fcs_err_frames", "rx_crc_errors"}},
    {NicCounter::kRxPause, {"rx_pause_ctrl_phy", "rx_pause_frames", ""}},
    {NicCounter::kTxPause, {"tx_pause_ctrl_phy", "tx_pause_frames", ""}},
};

// Per-priority PFC pause frames: prefix, priority digit, suffix.
struct PfcPattern {
  bool rx;
  std::string_view prefix;
  std::string_view suffix;
};
constexpr PfcPattern kPfc[] = {
    {true, "rx_prio", "_pause"},  // mlx5
    {false, "tx_prio", "_pause"},
    {true, "rx_pfc_ena_frames_pri", ""},  // bnxt_en
    {false, "tx_pfc_ena_frames_pri", ""},
};

// The priority of a PFC counter name, or -1.
int PfcPriority(std::string_view name, const PfcPattern& p) {
  if (name.size() != p.prefix.size() + 1 + p.suffix.size()) return -1;
  if (!name.starts_with(p.prefix) || !name.ends_with(p.suffix)) return -1;
  const char digit = name[p.prefix.size()];
  return digit >= '0' && digit < '0' + static_cast<int>(kPfcPriorities) ? digit - '0' : -1;
}

std::string Errno(std::string_view what) {
  return std::string(what) + ": " + std::strerror(errno);
}

bool Ioctl(int fd, const std::string& netdev, void* data) {
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, netdev.data(), std::min(netdev.size(), sizeof(ifr.ifr_name) - 1));
  ifr.ifr_data = static_cast<char*>(data);
  return ::ioctl(fd, SIOCETHTOOL, &ifr) == 0;
}

}  // namespace

void MapEthtoolStats(std::span<const EthtoolStat> stats, NicReading& reading) {
  for (const NamedCounter& named : kNamed) {
    bool found = false;
    for (std::string_view name : named.names) {
      if (name.empty() || found) break;
      for (const EthtoolStat& stat : stats) {
        if (stat.name == name) {
          reading[named.counter] = stat.value;
          found = true;
          break;
        }
      }
    }
  }
  for (const EthtoolStat& stat : stats) {
    for (const PfcPattern& pattern : kPfc) {
      const int priority = PfcPriority(stat.name, pattern);
      if (priority < 0) continue;
      auto& slot = (pattern.rx ? reading.rx_pfc_pause : reading.tx_pfc_pause)[priority];
      if (!slot) slot = stat.value;
    }
  }
}

IoctlEthtoolStats::IoctlEthtoolStats() : socket_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {}

bool IoctlEthtoolStats::Read(const std::string& netdev, std::vector<EthtoolStat>* out,
                             std::string* error) {
  out->clear();
  if (!socket_.valid()) {
    *error = "no socket for SIOCETHTOOL";
    return false;
  }
  if (netdev.size() >= IFNAMSIZ) {
    *error = "netdev name too long";
    return false;
  }
  // ETHTOOL_GSSET_INFO: how many statistics the driver has now.
  // The header plus one u32 of data, in u64s so the header's u64 is aligned.
  std::array<std::uint64_t, (sizeof(ethtool_sset_info) + sizeof(std::uint32_t) + 7) / 8> sset{};
  auto* info = reinterpret_cast<ethtool_sset_info*>(sset.data());
  info->cmd = ETHTOOL_GSSET_INFO;
  info->sset_mask = std::uint64_t{1} << ETH_SS_STATS;
  if (!Ioctl(socket_.get(), netdev, info)) {
    *error = Errno("ETHTOOL_GSSET_INFO");
    return false;
  }
  const std::uint32_t count =
      (info->sset_mask & (std::uint64_t{1} << ETH_SS_STATS)) != 0 ? info->data[0] : 0;
  if (count == 0) {
    *error = "the driver has no statistics";
    return false;
  }

  std::vector<std::string>& names = names_[netdev];
  if (names.size() != count) {
    std::vector<std::uint8_t> buffer(sizeof(ethtool_gstrings) +
                                     std::size_t{count} * ETH_GSTRING_LEN);
    auto* strings = reinterpret_cast<ethtool_gstrings*>(buffer.data());
    strings->cmd = ETHTOOL_GSTRINGS;
    strings->string_set = ETH_SS_STATS;
    strings->len = count;
    if (!Ioctl(socket_.get(), netdev, strings)) {
      names.clear();
      *error = Errno("ETHTOOL_GSTRINGS");
      return false;
    }
    names.clear();
    const std::uint32_t got = std::min(strings->len, count);
    for (std::uint32_t i = 0; i < got; ++i) {
      const char* s =
          reinterpret_cast<const char*>(strings->data) + std::size_t{i} * ETH_GSTRING_LEN;
      names.emplace_back(s, ::strnlen(s, ETH_GSTRING_LEN));
    }
  }

  std::vector<std::uint8_t> buffer(sizeof(ethtool_stats) + names.size() * sizeof(std::uint64_t));
  auto* stats = reinterpret_cast<ethtool_stats*>(buffer.data());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = static_cast<std::uint32_t>(names.size());
  if (!Ioctl(socket_.get(), netdev, stats)) {
    *error = Errno("ETHTOOL_GSTATS");
    return false;
  }
  const std::size_t n = std::min<std::size_t>(stats->n_stats, names.size());
  out->reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t value = 0;
    std::memcpy(&value, buffer.data() + sizeof(ethtool_stats) + i * sizeof(std::uint64_t),
                sizeof value);
    out->push_back({names[i], value});
  }
  return true;
}

}  // namespace hostmesh::agent::telemetry
