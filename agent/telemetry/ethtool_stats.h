#pragma once

// A netdev's driver statistics (what `ethtool -S` prints), read through the
// SIOCETHTOOL ioctl: ETHTOOL_GSSET_INFO for the count, ETHTOOL_GSTRINGS for
// the names (cached until the count changes), ETHTOOL_GSTATS for the values.
// MapEthtoolStats picks the counters the diagnosis needs out of them.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "agent/telemetry/nic_reading.h"
#include "common/base/unique_fd.h"

namespace hostmesh::agent::telemetry {

struct EthtoolStat {
  std::string name;
  std::uint64_t value = 0;
};

class EthtoolStatsSource {
 public:
  virtual ~EthtoolStatsSource() = default;
  // The statistics of `netdev` in the driver's order; false with *error set
  // when the device is missing or the driver has none.
  virtual bool Read(const std::string& netdev, std::vector<EthtoolStat>* out,
                    std::string* error) = 0;
};

// The real one, in the calling thread's network namespace.
class IoctlEthtoolStats final : public EthtoolStatsSource {
 public:
  IoctlEthtoolStats();
  bool Read(const std::string& netdev, std::vector<EthtoolStat>* out, std::string* error) override;

 private:
  UniqueFd socket_;
  std::map<std::string, std::vector<std::string>> names_;  // per netdev
};

// Sets the counters whose driver names are known (mlx5, bnxt_en and the
// common spellings; see the table in ethtool_stats.cc); others are ignored.
void MapEthtoolStats(std::span<const EthtoolStat> stats, NicReading& reading);

}  // namespace hostmesh::agent::telemetry
