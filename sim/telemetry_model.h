#pragma once

// NIC counters of the simulated fleet, as its faults would move them on an
// mlx5 NIC: what the agent's telemetry sampler would read from sysfs and
// ethtool. A reading is a closed form of the faults up to a time (counters
// since time 0), so any two readings give the agent's own Diff, and the
// upload goes through the agent's ToProto like a real one. Pure.
//
// Per fault kind (nothing else moves a counter but the tenant's traffic):
//   rnic_loss       symbol errors (RDMA and PCS) at `rate` of the NIC's frames,
//                   FCS and receive errors at 90% of that: a dirty optic
//   rnic_flap       link_downed and PHY link-down events +1 per down phase,
//                   carrier changes +1 per down and per up, port down in a down phase
//   rnic_down       as one down phase lasting the whole fault
//   pcie_downgrade  PCIe x8 of x16, pause frames sent (priority 3) and receive
//                   discards (rx_discards_phy) at `rate` of the NIC's frames
//   ecmp_collision  pause frames received (priority 3) by every NIC cabled to
//                   the rail switch below the hot uplink
//   missing_route, blackhole, pfc_misconfig, link faults, switch_loss,
//   host_processing: no NIC counter moves (the switch's counters, which the
//                   agent cannot read, would)

#include <cstdint>
#include <vector>

#include "agent/telemetry/nic_reading.h"
#include "sim/faults.h"
#include "sim/fleet.h"

namespace hostmesh::sim {

struct TelemetryModelParams {
  double frames_per_second = 1e6;        // tenant traffic a NIC carries each way
  double bytes_per_frame = 4096;         // RoCE MTU
  double pause_frames_per_second = 2e3;  // while a NIC pauses or is paused
  std::uint32_t pcie_max_width = 16;
  std::uint32_t pcie_max_speed_mts = 16000;
  std::uint32_t pcie_downgraded_width = 8;
};

class TelemetryModel {
 public:
  TelemetryModel(const Fleet& fleet, const FaultSet& faults, TelemetryModelParams params = {});

  // NIC `nic` of `host` read at simulation time t (counters since time 0);
  // time_ns is t + wall_offset_ns.
  agent::telemetry::NicReading Read(std::uint32_t host, std::uint32_t nic, std::int64_t t,
                                    std::int64_t wall_offset_ns) const;

 private:
  const Fleet& fleet_;
  const FaultSet& faults_;
  TelemetryModelParams params_;
  // By host, NIC: the faults that move its counters (indices into faults()).
  std::vector<std::vector<std::vector<std::uint32_t>>> by_nic_;
};

// Seconds of [start, end) before t.
double ActiveSeconds(const Fault& f, std::int64_t t);
// Down phases begun before or at t, and up transitions (a down phase ending) by t.
std::uint64_t DownsBy(const Fault& f, std::int64_t t);
std::uint64_t UpsBy(const Fault& f, std::int64_t t);

}  // namespace hostmesh::sim
