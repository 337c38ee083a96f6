#include "topology/inventory_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/config/config_error.h"
#include "tests/topology/test_fabrics.h"

namespace hostmesh::topology {
namespace {

using ::testing::HasSubstr;

// A 2 hosts x 2 rails x 2 spines inventory, as the testbed prints it.
const std::string& Base() {
  static const std::string text =
      testing::GeneratedText({.hosts = 2, .rails = 2, .spines = 2, .pods = 1});
  return text;
}

// Replaces the `nth` (0-based) line equal to `line` (after its indentation) by
// `replacement` at the same indentation; returns the text and the line number.
std::pair<std::string, int> ReplaceLine(const std::string& text, const std::string& line, int nth,
                                        const std::string& replacement) {
  std::istringstream in(text);
  std::string out;
  std::string current;
  int number = 0;
  int found = 0;
  int at = 0;
  while (std::getline(in, current)) {
    ++number;
    const size_t indent = current.find_first_not_of(" -");
    if (indent != std::string::npos && current.substr(indent) == line && found++ == nth) {
      current = current.substr(0, indent) + replacement;
      at = number;
    }
    out += current + "\n";
  }
  EXPECT_NE(at, 0) << "no line " << line;
  return {out, at};
}

struct BadCase {
  const char* name;
  const char* line;  // the line to change (without indentation)
  int nth;
  const char* replacement;
  const char* path;     // the issue's key path
  const char* message;  // part of the issue's message
};

class LoaderRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(LoaderRejects, NamesLineAndProblem) {
  const BadCase& c = GetParam();
  const auto [text, line] = ReplaceLine(Base(), c.line, c.nth, c.replacement);
  // The same issue with and without a leading "---" (lines then shift by one).
  for (const bool yaml_cpp : {false, true}) {
    SCOPED_TRACE(yaml_cpp ? "with ---" : "without ---");
    try {
      LoadInventory(yaml_cpp ? "---\n" + text : text, "inv.yaml");
      ADD_FAILURE() << "accepted";
    } catch (const config::ConfigError& e) {
      std::string all;
      bool matched = false;
      for (const config::ConfigIssue& issue : e.issues()) {
        all += issue.ToString() + "\n";
        matched |= issue.line == line + (yaml_cpp ? 1 : 0) && issue.path == c.path &&
                   issue.message.find(c.message) != std::string::npos;
        EXPECT_EQ(issue.source, "inv.yaml");
      }
      EXPECT_TRUE(matched) << "want line " << line << " " << c.path << ": " << c.message
                           << "\ngot:\n"
                           << all;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, LoaderRejects,
    ::testing::Values(
        BadCase{"UnknownSwitch", "switch: p0r0", 0, "switch: p0r7", "hosts[0].nics[0].switch",
                "unknown reference: no switch named \"p0r7\""},
        BadCase{"UnknownPeer", "peer: h001", 0, "peer: h042", "switches[0].interfaces[1].peer",
                "unknown reference: no device named \"h042\""},
        BadCase{"DuplicateIp", "ip: 198.18.0.5", 0, "ip: 198.18.0.1", "hosts[0].nics[1].ip",
                "duplicate IP 198.18.0.1, also on h000:nic0"},
        BadCase{"DuplicateSwitchIp", "ip: 198.19.0.2", 0, "ip: 198.19.0.0",
                "switches[0].interfaces[3].ip", "duplicate IP 198.19.0.0"},
        BadCase{"LinkToMissingInterface", "interface: nic1", 0, "interface: nic9",
                "links[2].a.interface",
                "link to a missing interface: \"h000\" has no interface \"nic9\""},
        BadCase{"LinkToUnknownDevice", "device: s01", 0, "device: s09", "links[5].b.device",
                "unknown device \"s09\""},
        BadCase{"LinkEndAddressDisagrees", "ip: 198.19.0.3", 1, "ip: 198.19.0.7", "links[5].b.ip",
                "198.19.0.7 is not the address of s01:p0r0"},
        BadCase{"NicOnSpine", "switch: p0r1", 0, "switch: s00", "hosts[0].nics[1].switch",
                "the NIC has no rail switch: \"s00\" is a spine switch"},
        BadCase{"NicOnHost", "switch: p0r1", 1, "switch: h000", "hosts[1].nics[1].switch",
                "the NIC has no rail switch: \"h000\" is a host"},
        BadCase{"NicOnWrongRail", "rail: 1", 0, "rail: 0", "hosts[0].nics[1].rail",
                "NIC of rail 0 hangs off p0r1, the switch of rail 1"},
        BadCase{"UnknownKeyOnSwitch", "rail: 1", 2, "zone: 1", "switches[1].zone", "unknown key"},
        BadCase{"UnknownKey", "netdev: nic0", 0, "netdevice: nic0", "hosts[0].nics[0].netdevice",
                "unknown key; did you mean \"netdev\"?"},
        BadCase{"BadTier", "tier: spine", 0, "tier: spline", "switches[2].tier", "must be one of"},
        BadCase{"BadAddress", "ip: 198.18.0.1", 0, "ip: 198.18.0.300", "hosts[0].nics[0].ip",
                "expected an IPv4 or IPv6 address"},
        BadCase{"Ipv6Address", "ip: 198.18.0.1", 0, "ip: fd00::1", "hosts[0].nics[0].ip",
                "the fabric is IPv4"},
        BadCase{"UnsupportedVersion", "version: 1", 0, "version: 2", "version",
                "unsupported inventory version 2"},
        BadCase{"WrongSubnet", "subnet: 198.18.0.0/31", 0, "subnet: 198.18.0.2/31",
                "links[0].subnet", "does not hold both ends"},
        BadCase{"PeerAddressDisagrees", "peer_ip: 198.18.0.3", 0, "peer_ip: 198.18.0.7",
                "switches[0].interfaces[1].peer_ip",
                "198.18.0.7 is not the address of h001:nic0 (198.18.0.3)"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(Loader, RailSwitchNeedsItsRail) {
  // The third "rail: 0" is p0r0's own (after those of h000's and h001's nic0).
  const std::string text = ReplaceLine(Base(), "rail: 0", 2, "# rail left out").first;
  const int line = ReplaceLine(Base(), "name: p0r0", 0, "name: p0r0").second;
  try {
    LoadInventory(text, "inv.yaml");
    FAIL() << "accepted";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    EXPECT_EQ(e.issues()[0].line, line);
    EXPECT_EQ(e.issues()[0].path, "switches[0]");
    EXPECT_EQ(e.issues()[0].message, "rail switch \"p0r0\" needs `rail`, its rail index");
  }
}

TEST(Loader, NicWithoutLinkIsReported) {
  // Drop links[0] (h000.nic0-p0r0): the NIC and the switch port lose their link.
  std::string text = Base();
  const size_t start = text.find("  - name: h000.nic0-p0r0");
  const size_t end = text.find("  - name: h001.nic0-p0r0");
  text.erase(start, end - start);
  try {
    LoadInventory(text, "inv.yaml");
    FAIL() << "accepted";
  } catch (const config::ConfigError& e) {
    ASSERT_FALSE(e.issues().empty());
    EXPECT_EQ(e.issues()[0].path, "hosts[0].nics[0].switch");
    EXPECT_THAT(e.issues()[0].message, HasSubstr("no entry in links joins h000:nic0"));
    EXPECT_EQ(e.issues()[0].line, 15);
  }
}

// The real output of the testbed's `fabric topology` (no root needed).
TEST(Loader, LoadsTheTestbedInventory) {
  const Topology t = LoadInventory(testing::FabricTopologyOutput(4, 4, 4, 2), "fabric");
  EXPECT_EQ(t.CountDevices(Tier::kHost), 4u);
  EXPECT_EQ(t.CountDevices(Tier::kRail), 8u);
  EXPECT_EQ(t.CountDevices(Tier::kSpine), 4u);
  EXPECT_EQ(t.links().size(), 16u + 32u);
  // Stable ids: hosts first in file order, then switches; NICs by rail.
  EXPECT_EQ(t.device(0).name, "h000");
  EXPECT_EQ(t.device(4).name, "p0r0");
  EXPECT_EQ(t.device(12).name, "s00");
  const InterfaceId port = t.FindInterface(*ParseIpv4("198.19.0.1"));
  ASSERT_NE(port, kNone);
  EXPECT_EQ(t.DescribeInterface(port), "s00:p0r0 (198.19.0.1)");
  EXPECT_EQ(t.Describe(t.interface(port).link), "p0r0:s00 - s00:p0r0");
  EXPECT_EQ(t.device(t.DeviceOf(t.Peer(t.FindInterface(*ParseIpv4("198.18.0.1"))))).name, "p0r0");
  // The generator builds the same graph with the same ids.
  const Topology g = testing::Generated({.hosts = 4, .rails = 4, .spines = 4, .pods = 2});
  ASSERT_EQ(g.interfaces().size(), t.interfaces().size());
  for (InterfaceId i = 0; i < t.interfaces().size(); ++i) {
    EXPECT_EQ(g.DescribeInterface(i), t.DescribeInterface(i));
  }
}

TEST(Loader, FileErrors) {
  try {
    LoadInventoryFile("/nonexistent/inventory.yaml");
    FAIL();
  } catch (const config::ConfigError& e) {
    EXPECT_THAT(e.issues()[0].message, HasSubstr("cannot read the file"));
  }
}

// Reporting stays linear in the file, and its message bounded, however many
// mistakes the file holds: 50,000 hosts of one name are 49,999 duplicates,
// each located (line of the duplicate, line of the first) through an index
// built once; the first 100 by position are listed, the rest counted. Time
// is bench/config_errors_bench's to show, not a unit test's to assert.
TEST(Loader, FiftyThousandDuplicateNamesAreCountedAndTheFirstHundredListed) {
  std::string text = "version: 1\nswitches: []\nlinks: []\nhosts:\n";
  for (int i = 0; i < 50'000; ++i) text += "  - {name: h, nics: []}\n";
  try {
    LoadInventory(text, "inv.yaml");
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.total(), 49'999U);
    ASSERT_EQ(e.issues().size(), config::kMaxListedIssues);
    // The first by position: hosts[1] on line 6, pointing back at line 5.
    EXPECT_EQ(e.issues().front().line, 6);
    EXPECT_EQ(e.issues().front().path, "hosts[1].name");
    EXPECT_THAT(e.issues().front().message, HasSubstr("also hosts[0] (line 5)"));
    EXPECT_EQ(e.issues().back().line, 105);
    EXPECT_EQ(e.OmittedLine(),
              "inv.yaml: ... and 49899 more problems (the first 100 by position are listed)");
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("\ninv.yaml: ... and 49899 more problems"));
    EXPECT_LT(what.size(), 16'000U);
  }
}

TEST(Loader, AFleetOfTenThousandHostsFitsTheCapTwice) {
  const std::string text = testing::GeneratedText({.hosts = 10'000, .rails = 8, .spines = 64});
  EXPECT_LT(text.size() * 2, kMaxInventoryFileBytes.bytes) << text.size();
}

TEST(Loader, AFileOverTheCapIsRefusedBeforeParsing) {
  const std::string path = ::testing::TempDir() + "hm_inventory_cap.yaml";
  {
    std::ofstream file(path);
    file << "version: 1\n";
  }
  // Sparse: fstat reports the size; nothing past the first line is written.
  std::filesystem::resize_file(path, kMaxInventoryFileBytes.bytes + 1);
  try {
    LoadInventoryFile(path);
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 1U);
    EXPECT_EQ(e.issues()[0].source, path);
    EXPECT_EQ(e.issues()[0].message,
              "the file is 134217729 bytes, over the cap of 128MiB (134217728 bytes); refused "
              "before parsing");
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace hostmesh::topology
