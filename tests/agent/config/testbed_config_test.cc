// Contract between the testbed and the agent: what `fabric agent-config`
// prints loads in the agent's own config loader, unchanged. `fabric` computes
// the config from the fabric's size alone, so no root or namespace is needed.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "agent/config/agent_config.h"
#include "common/config/config_error.h"

namespace hostmesh::agent {
namespace {

std::string RunCommand(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return {};
  std::string out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe.get())) > 0) out.append(buf.data(), n);
  return out;
}

TEST(agent_config_testbed, FabricAgentConfigLoads) {
  const std::string yaml = RunCommand(std::string(HOSTMESH_PYTHON3) + " " + HOSTMESH_FABRIC +
                                      " agent-config --hosts 4 --rails 4 --spines 2 h002");
  ASSERT_FALSE(yaml.empty()) << "fabric agent-config printed nothing";
  AgentConfig cfg;
  try {
    cfg = ParseAgentConfig(yaml, "fabric agent-config h002");
  } catch (const config::ConfigError& e) {
    FAIL() << e.what() << "\n--- config ---\n" << yaml;
  }
  EXPECT_EQ(cfg.host, "h002");
  EXPECT_EQ(cfg.transport, Transport::kUdp);
  ASSERT_EQ(cfg.nics.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(cfg.nics[r].rail, r);
    EXPECT_EQ(cfg.nics[r].netdev, "nic" + std::to_string(r));
  }
  // Layout: NIC (h, r) is 198.18.0.0 + 2 * (r * hosts + h) + 1.
  EXPECT_EQ(cfg.nics[1].ip.ToString(), "198.18.0.13");
  EXPECT_EQ(cfg.analyzer.address.ToString(), "198.19.128.1:50051");
  EXPECT_EQ(cfg.metrics.listen.ToString(), "198.19.129.2:9100");
}

}  // namespace
}  // namespace hostmesh::agent
