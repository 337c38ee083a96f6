// The built hostmeshctl, run as a user would: `topology generate` output
// validates, a broken inventory fails with its line, `show` summarizes, every
// subcommand has --help, and `trace` rejects bad input with exit 2 (before it
// needs any privilege) and says so when CAP_NET_RAW is missing (exit 3).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/ctl/ctl_runner.h"

namespace hostmesh::ctl::testing {
namespace {

using ::testing::HasSubstr;

class CtlCli : public ::testing::Test {
 protected:
  RunResult Run(const std::string& args) { return RunShell(Ctl(args), dir_); }

  // A generated 4 x 4 x 2 inventory in the temp dir.
  std::string Generated(const std::string& name = "inv.yaml") {
    const RunResult r = Run("topology generate --hosts 4 --rails 4 --spines 2");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto path = dir_ / name;
    WriteFile(path, r.out);
    return path.string();
  }

  TempDir dir_;
};

TEST_F(CtlCli, GenerateThenValidateRoundTrip) {
  const std::string file = Generated();
  EXPECT_THAT(ReadFile(file), HasSubstr("version: 1"));
  const RunResult r = Run("topology validate " + Quote(file));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("valid: 4 hosts, 4 rail switches, 2 spine switches"));
  EXPECT_EQ(r.err, "");
}

TEST_F(CtlCli, GenerateThreeTiersValidates) {
  RunResult r = Run("topology generate --hosts 4 --rails 2 --spines 2 --tiers 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  WriteFile(dir_ / "t3.yaml", r.out);
  r = Run("topology validate " + Quote((dir_ / "t3.yaml").string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("aggregation"));
}

TEST_F(CtlCli, GenerateRejectsImpossibleShape) {
  const RunResult r = Run("topology generate --hosts 4 --rails 1 --spines 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("hostmeshctl topology generate"));
}

TEST_F(CtlCli, ValidateBrokenFileNamesTheLine) {
  std::string text = ReadFile(Generated());
  // h000's rail-1 NIC pointed at a spine instead of its rail switch.
  const std::string good = "        switch: p0r1\n";
  const auto at = text.find(good);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, good.size(), "        switch: s01\n");
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
  const auto broken = dir_ / "broken.yaml";
  WriteFile(broken, text);

  const RunResult r = Run("topology validate " + Quote(broken.string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(broken.string() + ":" + std::to_string(line) + ":"));
  EXPECT_THAT(r.err, HasSubstr("rail switch"));
  EXPECT_THAT(r.err, HasSubstr("in " + broken.string()));
  EXPECT_EQ(r.out, "");
}

TEST_F(CtlCli, ValidateMissingFile) {
  const RunResult r = Run("topology validate " + Quote((dir_ / "nope.yaml").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("nope.yaml"));
}

TEST_F(CtlCli, Show) {
  const RunResult r = Run("topology show " + Quote(Generated()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("devices: 4 hosts, 4 rail switches, 2 spine switches"));
  EXPECT_THAT(r.out, HasSubstr("links: 24 (16 nic, 8 fabric)"));
  EXPECT_THAT(r.out, HasSubstr("example: h000 nic0 -> nic1: 2 ECMP paths"));
}

TEST_F(CtlCli, HelpOfEverySubcommand) {
  struct Case {
    std::string args;
    std::string mentions;
  };
  for (const Case& c :
       {Case{"--help", "trace"}, Case{"topology --help", "generate"},
        Case{"topology generate --help", "--spines"}, Case{"topology validate --help", "FILE"},
        Case{"topology show --help", "FILE"}, Case{"trace --help", "--sport"},
        Case{"trace --help", "--topology"}, Case{"trace --help", "CAP_NET_RAW"}}) {
    SCOPED_TRACE(c.args);
    const RunResult r = Run(c.args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(c.mentions));
  }
}

TEST_F(CtlCli, NoSubcommandIsAUsageError) {
  EXPECT_EQ(Run("").exit_code, 2);
  EXPECT_EQ(Run("topology").exit_code, 2);
  EXPECT_EQ(Run("frobnicate").exit_code, 2);
}

TEST_F(CtlCli, TraceUsageErrors) {
  struct Case {
    std::string args;
    std::string mentions;  // in stderr
  };
  const std::string ok = "--src 198.18.0.1 --dst 198.18.0.5 ";
  for (const Case& c : {
           Case{"trace", "--src"},
           Case{"trace --src 198.18.0.1 --dst 198.18.0.5", "--sport"},
           Case{"trace --dst 198.18.0.5 --sport 49152", "--src"},
           Case{"trace --src 198.18.0.300 --dst 198.18.0.5 --sport 49152",
                "--src: not an IPv4 address: \"198.18.0.300\""},
           Case{"trace --src 198.18.0.1 --dst fe80::1 --sport 49152", "--dst: not an IPv4 address"},
           Case{"trace " + ok + "--sport 70000", "--sport"},
           Case{"trace " + ok + "--sport 0", "--sport"},
           Case{"trace " + ok + "--sport 49152 --dport x", "--dport"},
           Case{"trace " + ok + "--sport 49152 --max-ttl 0", "--max-ttl"},
           Case{"trace " + ok + "--sport 49152 --max-ttl 33", "--max-ttl"},
           Case{"trace " + ok + "--sport 49152 --timeout-ms -5", "--timeout-ms"},
           Case{"trace " + ok + "--sport 49152 --bogus", "--bogus"},
           Case{"trace " + ok + "--sport 49152 --topology /nonexistent/inv.yaml",
                "/nonexistent/inv.yaml"},
       }) {
    SCOPED_TRACE(c.args);
    const RunResult r = Run(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.mentions));
  }
}

TEST_F(CtlCli, TraceWithBrokenTopologyNamesTheLine) {
  std::string text = ReadFile(Generated());
  const std::string good = "    tier: spine\n";
  const auto at = text.find(good);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, good.size(), "    tier: galaxy\n");
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
  const auto broken = dir_ / "broken.yaml";
  WriteFile(broken, text);
  const RunResult r = Run("trace --src 198.18.0.1 --dst 198.18.0.5 --sport 49152 --topology " +
                          Quote(broken.string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(broken.string() + ":" + std::to_string(line) + ":"));
  EXPECT_EQ(r.out, "");
}

// Without CAP_NET_RAW the raw ICMP socket fails: exit 3 and a clear message.
// As root, setpriv drops the capability from the bounding set before exec.
TEST_F(CtlCli, TraceWithoutCapNetRawSaysSo) {
  const std::string args = "trace --src 127.0.0.1 --dst 127.0.0.1 --sport 49152 --max-ttl 1";
  const RunResult r =
      ::geteuid() == 0 ? RunShell("setpriv --bounding-set -net_raw " + Ctl(args), dir_) : Run(args);
  if (::geteuid() == 0 && r.err.find("setpriv") != std::string::npos) {
    GTEST_SKIP() << "setpriv cannot drop capabilities here: " << r.err;
  }
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("needs CAP_NET_RAW (run as root)"));
}

}  // namespace
}  // namespace hostmesh::ctl::testing
