#include "agent/verbs/device_discovery.h"

#include <gtest/gtest.h>

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

TEST(DeviceDiscovery, HostWithoutRdmaStackHasNoDevices) {
  // This build machine's kernel has no RDMA stack; on a host that has one
  // (soft-RoCE under QEMU, a GPU node) this test is not meaningful.
  auto devices = ListRdmaDevices();
  ASSERT_TRUE(devices.ok());
  if (!devices.value().empty()) GTEST_SKIP() << "this host has RDMA devices";
  EXPECT_TRUE(devices.value().empty());
}

}  // namespace
}  // namespace hostmesh::agent::verbs
