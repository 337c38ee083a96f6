// What the analyzer's process exits with when a file is wrong: --check-config
// loads the inventory as the daemon would, and the daemon's start tells an
// inventory error (2: systemd does not retry) from a failure a retry may clear
// (1). No store, no port: the inventory is read before either.
#include "analyzer/main/check_config.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "analyzer/main/analyzer_app.h"
#include "common/base/exit_codes.h"
#include "common/metrics/registry.h"
#include "tests/analyzer/store/temp_dir.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"
#include "topology/inventory_writer.h"

namespace hostmesh::analyzer::app {
namespace {

constexpr topology::FabricShape kShape{.hosts = 4, .rails = 2, .spines = 2};

class CheckConfigTest : public ::testing::Test {
 protected:
  std::filesystem::path Write(const std::string& name, const std::string& text) {
    const std::filesystem::path path = dir_.path() / name;
    std::ofstream(path) << text;
    return path;
  }
  std::string GoodInventory() {
    return topology::WriteInventoryYaml(topology::GenerateInventory(kShape), {});
  }
  int Check(const std::filesystem::path& inventory) {
    AnalyzerConfig config = ParseAnalyzerConfig("{}", "analyzer.yaml");
    config.inventory = inventory;
    return CheckConfig(config, out_, err_);
  }

  analyzer::testing::TempDir dir_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(CheckConfigTest, WithoutAnInventorySaysSo) {
  EXPECT_EQ(Check(""), kExitOk) << err_.str();
  EXPECT_NE(out_.str().find("config ok: grpc 0.0.0.0:50051"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("inventory none"), std::string::npos) << out_.str();
}

TEST_F(CheckConfigTest, LoadsTheInventoryAndCountsItsSwitchesLinksAndHosts) {
  const topology::Topology topo = topology::BuildTopology(topology::GenerateInventory(kShape));
  const std::size_t hosts = topo.CountDevices(topology::Tier::kHost);
  ASSERT_EQ(hosts, 4U);
  const auto path = Write("inventory.yaml", GoodInventory());
  EXPECT_EQ(Check(path), kExitOk) << err_.str();
  const std::string want = "inventory " + path.string() + ": " +
                           std::to_string(topo.devices().size() - hosts) + " switches, " +
                           std::to_string(topo.links().size()) + " links, 4 hosts";
  EXPECT_NE(out_.str().find(want), std::string::npos) << out_.str() << " wants " << want;
  EXPECT_EQ(err_.str(), "");
}

TEST_F(CheckConfigTest, AnInventoryErrorExits2WithTheProblemAndItsLine) {
  std::string text = GoodInventory();
  const std::size_t at = text.find("name: h001");  // the second host takes the first's name
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 10, "name: h000");
  const auto path = Write("inventory.yaml", text);
  EXPECT_EQ(Check(path), kExitConfig);
  EXPECT_NE(err_.str().find(path.string() + ":"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("duplicate device name \"h000\""), std::string::npos) << err_.str();
  EXPECT_EQ(out_.str(), "");
}

TEST_F(CheckConfigTest, AMissingInventoryExits2NamingTheFile) {
  const auto path = dir_.path() / "absent.yaml";
  EXPECT_EQ(Check(path), kExitConfig);
  EXPECT_NE(err_.str().find(path.string() + ": cannot read the file: No such file"),
            std::string::npos)
      << err_.str();
}

TEST_F(CheckConfigTest, AnInventoryOverTheCapIsRefusedBeforeParsing) {
  // Sparse: the size is what fstat says, nothing is written or read.
  const auto path = dir_.path() / "huge.yaml";
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  const auto size = static_cast<off_t>(topology::kMaxInventoryFileBytes.bytes + 1);
  ASSERT_EQ(::ftruncate(fd, size), 0);
  ::close(fd);
  EXPECT_EQ(Check(path), kExitConfig);
  EXPECT_NE(err_.str().find(path.string() + ": the file is " + std::to_string(size) +
                            " bytes, over the cap of 128MiB"),
            std::string::npos)
      << err_.str();
}

TEST_F(CheckConfigTest, TheDaemonsStartTellsAnInventoryErrorFromOtherFailures) {
  const SystemClock clock;
  {
    metrics::Registry registry;
    AnalyzerConfig config = ParseAnalyzerConfig("{}", "analyzer.yaml");
    config.inventory = dir_.path() / "absent.yaml";
    config.data_dir = dir_.path() / "data";
    AnalyzerApp app(config, {}, clock, registry);
    std::string error;
    EXPECT_FALSE(app.Start(&error));
    EXPECT_NE(error.find("absent.yaml"), std::string::npos) << error;
    EXPECT_EQ(app.start_exit_code(), kExitConfig);
  }
  {
    // A store that cannot open (its directory is a file): a failure, 1.
    metrics::Registry registry;
    AnalyzerConfig config = ParseAnalyzerConfig("{}", "analyzer.yaml");
    config.inventory = Write("inventory.yaml", GoodInventory());
    config.data_dir = Write("not-a-directory", "");
    AnalyzerApp app(config, {}, clock, registry);
    std::string error;
    EXPECT_FALSE(app.Start(&error));
    EXPECT_NE(error.find("store"), std::string::npos) << error;
    EXPECT_EQ(app.start_exit_code(), kExitFailure);
  }
}

}  // namespace
}  // namespace hostmesh::analyzer::app
