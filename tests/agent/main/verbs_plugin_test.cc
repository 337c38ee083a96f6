// The verbs transport module (verbs_plugin.h): loaded on demand, and until
// then libibverbs is not in the process at all.
#include "agent/main/verbs_plugin.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace hostmesh::agent::app {
namespace {

bool Mapped(const std::string& library) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(library) != std::string::npos) return true;
  }
  return false;
}

TEST(verbs_plugin, LibibverbsIsMappedOnlyOnceTheModuleIsLoaded) {
  EXPECT_FALSE(Mapped("libibverbs")) << "the agent's own code must not link libibverbs";
  EXPECT_FALSE(Mapped("libnl-3"));
  std::string error;
  const VerbsPlugin* plugin = LoadVerbsPluginFrom(HOSTMESH_VERBS_PLUGIN, &error);
  ASSERT_NE(plugin, nullptr) << error;
  EXPECT_EQ(plugin->version, kVerbsPluginVersion);
  EXPECT_TRUE(Mapped("libibverbs"));
}

TEST(verbs_plugin, ModuleMakesAVerbsTransportThatNamesAMissingDevice) {
  std::string error;
  const VerbsPlugin* plugin = LoadVerbsPluginFrom(HOSTMESH_VERBS_PLUGIN, &error);
  ASSERT_NE(plugin, nullptr) << error;
  EXPECT_FALSE(plugin->has_rdma_device("hostmesh-no-such-device"));
  SystemClock clock;
  verbs::VerbsTransportOptions options;
  options.nics.push_back({.name = "nic0", .rdma_device = "hostmesh-no-such-device", .ip = ""});
  VerbsPluginTransport made = plugin->make_transport(clock, options);
  ASSERT_NE(made.transport, nullptr);
  const OpenResult opened = made.transport->OpenNic(0);
  EXPECT_FALSE(opened.ok);
  // "no RDMA device: ..." on a host without any, else "RDMA device '...' not found".
  EXPECT_NE(opened.error.find("RDMA device"), std::string::npos) << opened.error;
  EXPECT_EQ(made.stats(0).receive_errors, 0u);
}

TEST(verbs_plugin, AMissingModuleIsAnErrorNamingIt) {
  std::string error;
  EXPECT_EQ(LoadVerbsPluginFrom("/nonexistent/hostmesh-agent-verbs.so", &error), nullptr);
  EXPECT_NE(error.find("/nonexistent/hostmesh-agent-verbs.so"), std::string::npos) << error;
}

}  // namespace
}  // namespace hostmesh::agent::app
