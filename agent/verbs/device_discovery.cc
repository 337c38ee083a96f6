#include "agent/verbs/device_discovery.h"

#include <endian.h>

#include <algorithm>
#include <cerrno>

#include "agent/verbs/verbs_handles.h"

namespace hostmesh::agent::verbs {

VerbsResult<std::vector<RdmaDeviceInfo>> ListRdmaDevices() {
  int count = 0;
  errno = 0;
  UniqueDeviceList list(ibv_get_device_list(&count));
  std::vector<RdmaDeviceInfo> devices;
  if (!list) {
    // ENOSYS: the kernel has no uverbs support at all -- same as no devices.
    if (errno == ENOSYS || errno == 0) return devices;
    return ErrnoError("ibv_get_device_list", errno);
  }
  for (int i = 0; i < count; ++i) {
    ibv_device* device = list.get()[i];
    const char* name = ibv_get_device_name(device);
    devices.push_back(
        RdmaDeviceInfo{name != nullptr ? name : "", be64toh(ibv_get_device_guid(device))});
  }
  return devices;
}

bool HasRdmaDevice(std::string_view name) {
  auto devices = ListRdmaDevices();
  if (!devices) return false;
  return std::any_of(devices.value().begin(), devices.value().end(),
                     [&](const RdmaDeviceInfo& d) { return d.name == name; });
}

}  // namespace hostmesh::agent::verbs
