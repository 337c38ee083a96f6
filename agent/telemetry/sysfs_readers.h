#pragma once

// Fill a NicReading from sysfs. Layouts (Linux, read-only attribute files):
//
//   class/infiniband/<dev>/ports/<p>/counters/<name>     IB PMA counters (mlx5)
//   class/infiniband/<dev>/ports/<p>/hw_counters/<name>  driver counters (mlx5, rxe)
//   class/infiniband/<dev>/ports/<p>/state, phys_state   "4: ACTIVE", "5: LinkUp"
//   class/net/<netdev>/carrier_changes, operstate
//   <pci function>/current_link_width, max_link_width, current_link_speed,
//   max_link_speed, aer_dev_correctable, aer_dev_nonfatal, aer_dev_fatal
//
// where <pci function> is class/infiniband/<dev>/device or
// class/net/<netdev>/device. A value the driver does not have (no file) stays
// unset; a file that exists but cannot be read or parsed, or a configured
// device that is missing, counts one failure of its source. Nothing throws.
//
// Each value goes through a ReadGate (read_gate.h): a value it holds back is
// not opened and stays unset, and a counter held back is never read from its
// other file either (a delta across two files would be nonsense). Without a
// gate everything is read.

#include <cstdint>
#include <string_view>

#include "agent/telemetry/nic_reading.h"
#include "agent/telemetry/read_gate.h"
#include "agent/telemetry/sysfs_tree.h"

namespace hostmesh::agent::telemetry {

void ReadRdmaPort(const SysfsTree& sysfs, std::string_view device, std::uint32_t port,
                  NicReading& reading, ReadGate& gate);
void ReadNetdev(const SysfsTree& sysfs, std::string_view netdev, NicReading& reading,
                ReadGate& gate);
// `function_dir` is relative to the root and may be a symlink ("class/net/x/device").
// A NIC without a PCI function (veth, rxe, virtio) reads nothing and fails nothing.
void ReadPcie(const SysfsTree& sysfs, std::string_view function_dir, NicReading& reading,
              ReadGate& gate);

void ReadRdmaPort(const SysfsTree& sysfs, std::string_view device, std::uint32_t port,
                  NicReading& reading);
void ReadNetdev(const SysfsTree& sysfs, std::string_view netdev, NicReading& reading);
void ReadPcie(const SysfsTree& sysfs, std::string_view function_dir, NicReading& reading);

// The TOTAL_ERR_* line of an aer_dev_* file, else the sum of its lines.
bool ParseAerTotal(std::string_view text, std::uint64_t* out);

}  // namespace hostmesh::agent::telemetry
