#include "agent/verbs/device_discovery.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>

namespace hostmesh::agent::verbs {
namespace {

TEST(DeviceDiscovery, ListingSucceedsWithOrWithoutDevices) {
  auto devices = ListRdmaDevices();
  ASSERT_TRUE(devices.ok()) << devices.error().message;
  for (const RdmaDeviceInfo& device : devices.value()) {
    EXPECT_FALSE(device.name.empty());
    EXPECT_TRUE(HasRdmaDevice(device.name));
  }
}

TEST(DeviceDiscovery, UnknownDeviceIsAbsent) {
  EXPECT_FALSE(HasRdmaDevice("hostmesh_no_such_device0"));
  EXPECT_FALSE(HasRdmaDevice(""));
}

// What libibverbs lists is what the kernel exports to user space: one
// uverbs device per RDMA device (none on a host without an RDMA stack, like
// the CI machine; rxe0..rxe2 in the soft-RoCE guest of tests/rdma).
TEST(DeviceDiscovery, ListsExactlyTheDevicesTheKernelExportsToUserSpace) {
  std::set<std::string> exported;
  const std::filesystem::path sysfs = "/sys/class/infiniband_verbs";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(sysfs, ec)) {
    std::ifstream ibdev(entry.path() / "ibdev");
    std::string name;
    if (std::getline(ibdev, name) && !name.empty()) exported.insert(name);
  }
  auto devices = ListRdmaDevices();
  ASSERT_TRUE(devices.ok()) << devices.error().message;
  std::set<std::string> listed;
  for (const RdmaDeviceInfo& device : devices.value()) listed.insert(device.name);
  EXPECT_EQ(listed, exported);
  std::cout << "[   INFO   ] " << listed.size() << " RDMA device(s) listed\n";
}

}  // namespace
}  // namespace hostmesh::agent::verbs
