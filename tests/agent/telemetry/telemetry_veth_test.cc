// The real reading paths on a veth pair in a network namespace of its own
// (root; skips otherwise): the SIOCETHTOOL ioctl (veth reports peer_ifindex,
// which must equal the peer's ifindex), and the collector over a sysfs
// mounted for that namespace, counting the carrier changes of a peer going
// down. The namespace is named with HOSTMESH_FABRIC_PREFIX when set.
//
// The reads run in a forked child that enters the namespace (setns) and a
// mount namespace of its own with a fresh sysfs, so the test process's
// namespaces are never touched; the child reports through a pipe. It waits
// for the kernel to settle operstate (linkwatch) before each read.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "agent/telemetry/ethtool_stats.h"
#include "agent/telemetry/sysfs_tree.h"
#include "agent/telemetry/telemetry_collector.h"

namespace hostmesh::agent::telemetry {
namespace {

std::string Prefix() {
  const char* prefix = std::getenv("HOSTMESH_FABRIC_PREFIX");
  return prefix != nullptr && *prefix != '\0' ? prefix : "hm-";
}

bool Shell(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

using Report = std::map<std::string, std::string>;

// The kernel sets operstate from a work queue (linkwatch) after a carrier
// change, so a busy machine shows the old state for a while: wait until
// `netdev` reads `state`, for at most 5 s. False when it never did.
bool AwaitOperstate(const std::string& sysfs_root, const std::string& netdev,
                    const std::string& state) {
  const SysfsTree sysfs(sysfs_root);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::string text;
  while (std::chrono::steady_clock::now() < deadline) {
    if (sysfs.ReadText("class/net/" + netdev + "/operstate", &text) == ReadStatus::kOk &&
        text.substr(0, text.find_first_of(" \n")) == state) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Runs in the child, inside the namespace: "key value" lines.
std::string Probe(const std::string& sysfs_root) {
  std::ostringstream out;
  IoctlEthtoolStats ethtool;
  std::vector<EthtoolStat> stats;
  std::string error;
  if (ethtool.Read("tA", &stats, &error)) {
    out << "stats " << stats.size() << "\n";
    for (const EthtoolStat& s : stats) {
      if (s.name == "peer_ifindex") out << "peer_ifindex " << s.value << "\n";
    }
  } else {
    out << "ethtool_error " << error << "\n";
  }
  std::uint64_t ifindex = 0;
  if (SysfsTree(sysfs_root).ReadU64("class/net/tB/ifindex", &ifindex) == ReadStatus::kOk) {
    out << "tB_ifindex " << ifindex << "\n";
  }
  std::vector<EthtoolStat> none;
  if (!ethtool.Read("nope0", &none, &error)) out << "missing_error " << error << "\n";

  TelemetryCollector collector(sysfs_root, {{"nic0", "tA", "", 1}, {"nic1", "tB", "", 1}},
                               &ethtool);
  if (!AwaitOperstate(sysfs_root, "tA", "up")) out << "settle_error tA never up\n";
  // Monotonic times a default period (10 s) apart: the collector reads at most once per period.
  const MonoTime t0{};
  const TelemetrySample first = *collector.Sample(t0, 1);
  out << "carrier_before " << static_cast<int>(first.readings[0].carrier) << "\n";
  Shell("ip link set tB down");
  Shell("ip link set tB up");
  Shell("ip link set tB down");
  if (!AwaitOperstate(sysfs_root, "tA", "lowerlayerdown")) {
    out << "settle_error tA not lowerlayerdown\n";
  }
  const TelemetrySample second = *collector.Sample(t0 + std::chrono::seconds{10}, 2);
  if (second.deltas[0] && (*second.deltas[0])[NicCounter::kCarrierChanges]) {
    out << "carrier_changes " << *(*second.deltas[0])[NicCounter::kCarrierChanges] << "\n";
  }
  out << "carrier_after " << static_cast<int>(second.readings[0].carrier) << "\n";
  out << "failures " << second.readings[0].total_failures() << "\n";
  out << "pcie " << (second.readings[0].pcie ? 1 : 0) << "\n";
  return out.str();
}

Report InNamespace(const std::string& ns) {
  int fds[2];
  if (::pipe(fds) != 0) return {{"error", "pipe"}};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string text;
    const int ns_fd = ::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    char dir[] = "/tmp/hm_sysfs_XXXXXX";
    if (ns_fd < 0 || ::setns(ns_fd, CLONE_NEWNET) != 0) {
      text = "error setns " + std::string(std::strerror(errno)) + "\n";
    } else if (::unshare(CLONE_NEWNS) != 0 ||
               ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
               ::mkdtemp(dir) == nullptr || ::mount("sysfs", dir, "sysfs", 0, nullptr) != 0) {
      text = "error sysfs " + std::string(std::strerror(errno)) + "\n";
    } else {
      text = Probe(dir);
      ::umount(dir);
      ::rmdir(dir);
    }
    if (::write(fds[1], text.data(), text.size()) < 0) ::_exit(1);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0) text.append(buffer, n);
  ::close(fds[0]);
  if (pid > 0) ::waitpid(pid, nullptr, 0);
  Report report;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t space = line.find(' ');
    report[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(space + 1);
  }
  return report;
}

class TelemetryVeth : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create a network namespace and a veth";
    ns_ = Prefix() + "tel" + std::to_string(::getpid());
    if (!Shell("ip netns add " + ns_) ||
        !Shell("ip -n " + ns_ + " link add tA type veth peer name tB") ||
        !Shell("ip -n " + ns_ + " link set tA up") || !Shell("ip -n " + ns_ + " link set tB up")) {
      Shell("ip netns del " + ns_);
      GTEST_SKIP() << "cannot create namespace " << ns_ << " with a veth pair here";
    }
  }
  void TearDown() override {
    if (!ns_.empty()) Shell("ip netns del " + ns_);
  }
  std::string ns_;
};

TEST_F(TelemetryVeth, EthtoolIoctlAndSysfsReadTheRealDevice) {
  const Report r = InNamespace(ns_);
  ASSERT_EQ(r.count("error"), 0U) << r.at("error");
  ASSERT_EQ(r.count("ethtool_error"), 0U) << r.at("ethtool_error");
  ASSERT_EQ(r.count("settle_error"), 0U) << r.at("settle_error");
  ASSERT_TRUE(r.count("stats") && r.count("peer_ifindex") && r.count("tB_ifindex"));
  EXPECT_GT(std::stoul(r.at("stats")), 1U);
  EXPECT_EQ(r.at("peer_ifindex"), r.at("tB_ifindex"));
  ASSERT_TRUE(r.count("missing_error"));
  EXPECT_NE(r.at("missing_error").find("ETHTOOL_GSSET_INFO"), std::string::npos);
  EXPECT_EQ(r.at("carrier_before"), std::to_string(static_cast<int>(Carrier::kUp)));
  EXPECT_EQ(r.at("carrier_after"), std::to_string(static_cast<int>(Carrier::kDown)));
  ASSERT_TRUE(r.count("carrier_changes"));
  EXPECT_GE(std::stoul(r.at("carrier_changes")), 2U);  // down, up, down of the peer
  EXPECT_EQ(r.at("failures"), "0");  // veth has ethtool stats, carrier and no PCI function
  EXPECT_EQ(r.at("pcie"), "0");
}

}  // namespace
}  // namespace hostmesh::agent::telemetry
