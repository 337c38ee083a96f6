// `hostmeshctl trace` on the emulated rail fabric (deploy/testbed/fabric),
// 2 hosts x 4 rails x 2 spines with ICMP limits lifted: the binary runs inside
// h000's namespace (`ip netns exec`), traces nic0 -> nic1 with the fabric's
// own inventory, and its JSON hops must equal `fabric truth-path` ingress
// addresses, named by the right devices, resolved into the right links.
// Needs root; skips otherwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/ctl/ctl_runner.h"
#include "tests/support/fabric_shell.h"

namespace hostmesh::ctl::testing {
namespace {

using boost::property_tree::ptree;
using ::testing::HasSubstr;

const std::string kPrefix = hostmesh::testing::TestPrefix("ct");
// deploy/testbed/README.md: NIC link (h, r) has index r*H + h (H = 2), the
// NIC holds 198.18.0.0 + 2*index + 1.
const std::string kNic0 = "198.18.0.1";  // h000 nic0
const std::string kNic1 = "198.18.0.5";  // h000 nic1

std::string Fabric(const std::string& args) {
  return "HOSTMESH_FABRIC_PREFIX=" + kPrefix + " " + std::string(HOSTMESH_PYTHON3) + " " +
         HOSTMESH_FABRIC + " " + args;
}

ptree ParseJson(const std::string& text) {
  ptree tree;
  std::istringstream in(text);
  boost::property_tree::read_json(in, tree);
  return tree;
}

std::vector<ptree> Items(const ptree& list) {
  std::vector<ptree> out;
  for (const auto& [key, value] : list) out.push_back(value);
  return out;
}

class CtlTraceTestbed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces";
    const RunResult up =
        RunShell(Fabric("up --hosts 2 --rails 4 --spines 2 --icmp-unlimited"), dir_);
    if (up.exit_code != 0) {
      GTEST_FAIL() << "`fabric up` failed as root: " << up.err;
    }
    up_ = true;
    const RunResult topo = RunShell(Fabric("topology"), dir_);
    ASSERT_EQ(topo.exit_code, 0) << topo.err;
    inventory_ = (dir_ / "inventory.yaml").string();
    WriteFile(inventory_, topo.out);
  }
  void TearDown() override {
    if (up_) RunShell(Fabric("down"), dir_);
  }

  RunResult TraceInH000(const std::string& args) {
    return RunShell("ip netns exec " + kPrefix + "h000 " + Ctl("trace " + args), dir_);
  }

  TempDir dir_;
  bool up_ = false;
  std::string inventory_;
};

TEST_F(CtlTraceTestbed, HopsMatchTruthPathWithDeviceNames) {
  std::set<std::string> spines;
  for (int sport = 49152; sport < 49152 + 4; ++sport) {
    SCOPED_TRACE("sport " + std::to_string(sport));
    const std::string port = std::to_string(sport);
    const RunResult r = TraceInH000("--src " + kNic0 + " --dst " + kNic1 + " --sport " + port +
                                    " --dev nic0 --topology " + Quote(inventory_) + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const ptree trace = ParseJson(r.out);
    EXPECT_EQ(trace.get<std::string>("src"), kNic0);
    EXPECT_EQ(trace.get<std::string>("dst"), kNic1);
    EXPECT_EQ(trace.get<int>("sport"), sport);
    EXPECT_EQ(trace.get<int>("dport"), 4791);
    EXPECT_EQ(trace.get<std::string>("reached"), "true");
    EXPECT_EQ(trace.get<std::string>("end"), "destination");

    const RunResult truth_run =
        RunShell(Fabric("truth-path " + kNic0 + " " + kNic1 + " " + port + " --json"), dir_);
    ASSERT_EQ(truth_run.exit_code, 0) << truth_run.err;
    const auto truth = Items(ParseJson(truth_run.out));
    // h000, p0r0, spine, p0r1, h000.
    ASSERT_EQ(truth.size(), 5U) << truth_run.out;
    const auto hops = Items(trace.get_child("hops"));
    ASSERT_EQ(hops.size(), 4U) << r.out;
    for (std::size_t i = 0; i < 3; ++i) {
      SCOPED_TRACE("ttl " + std::to_string(i + 1));
      EXPECT_EQ(hops[i].get<int>("ttl"), static_cast<int>(i + 1));
      EXPECT_EQ(hops[i].get<std::string>("status"), "time_exceeded");
      EXPECT_EQ(hops[i].get<std::string>("address"), truth[i + 1].get<std::string>("ingress_ip"));
      EXPECT_EQ(hops[i].get<std::string>("device"), truth[i + 1].get<std::string>("device"));
      EXPECT_EQ(hops[i].get<std::string>("interface"), truth[i + 1].get<std::string>("ingress_if"));
    }
    const std::string spine = hops[1].get<std::string>("device");
    EXPECT_EQ(hops[0].get<std::string>("device"), "p0r0");
    EXPECT_EQ(hops[0].get<std::string>("interface"), "h000");
    EXPECT_THAT(spine, ::testing::AnyOf("s00", "s01"));
    EXPECT_EQ(hops[1].get<std::string>("interface"), "p0r0");
    EXPECT_EQ(hops[2].get<std::string>("device"), "p0r1");
    EXPECT_EQ(hops[2].get<std::string>("interface"), spine);
    // The destination answers Port Unreachable from nic1.
    EXPECT_EQ(hops[3].get<std::string>("status"), "destination");
    EXPECT_EQ(hops[3].get<std::string>("address"), kNic1);
    EXPECT_EQ(hops[3].get<std::string>("device"), "h000");
    EXPECT_EQ(hops[3].get<std::string>("interface"), "nic1");
    spines.insert(spine);

    EXPECT_EQ(trace.get<std::string>("path.status"), "ok");
    std::vector<std::string> links;
    for (const ptree& l : Items(trace.get_child("path.links"))) links.push_back(l.data());
    EXPECT_THAT(links, ::testing::ElementsAre("h000.nic0-p0r0", "p0r0-" + spine, "p0r1-" + spine,
                                              "h000.nic1-p0r1"));
  }
  EXPECT_FALSE(spines.empty());
}

TEST_F(CtlTraceTestbed, TextOutputNamesDevicesAndLinks) {
  const RunResult r = TraceInH000("--src " + kNic0 + " --dst " + kNic1 +
                                  " --sport 49152 --dev nic0 --topology " + Quote(inventory_));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("p0r0:h000"));
  EXPECT_THAT(r.out, HasSubstr("h000:nic1"));
  EXPECT_THAT(r.out, HasSubstr("path: ok, 4 links"));
  EXPECT_THAT(r.out, HasSubstr("h000.nic0-p0r0"));
  EXPECT_THAT(r.out, HasSubstr("end: destination, reached"));
}

// The agent runs on the host: its probe receiver holds nic1:4791 and consumes
// the last probe instead of answering Port Unreachable. The destination is
// local, so the trace infers it from the last switch hop: still reached.
TEST_F(CtlTraceTestbed, ReachesALocalNicWhoseReceiverSwallowsTheProbe) {
  const std::string receiver =
      "ip netns exec " + kPrefix +
      "h000 python3 -c 'import socket,time; s=socket.socket(socket.AF_INET,"
      " socket.SOCK_DGRAM); s.bind((\"" +
      kNic1 + "\", 4791)); time.sleep(20)' >/dev/null 2>&1 & echo $!";
  const RunResult started = RunShell(receiver, dir_);
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string pid = started.out.substr(0, started.out.find('\n'));
  // Trace only once the receiver holds the port, or the kernel would answer.
  const RunResult bound =
      RunShell("for i in $(seq 100); do ip netns exec " + kPrefix +
                   "h000 ss -Hunl 'sport = :4791' | grep -q . && exit 0; sleep 0.05; done; exit 1",
               dir_);
  ASSERT_EQ(bound.exit_code, 0) << "the receiver never bound nic1:4791";
  const RunResult r = TraceInH000("--src " + kNic0 + " --dst " + kNic1 +
                                  " --sport 49153 --dev nic0 --timeout-ms 300 --json");
  RunShell("kill " + pid, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const ptree trace = ParseJson(r.out);
  EXPECT_EQ(trace.get<std::string>("reached"), "true");
  EXPECT_THAT(r.out, HasSubstr("inferred_destination"));  // swallowed, not Port Unreachable
}

// An address nobody holds: not reached, exit 1.
TEST_F(CtlTraceTestbed, UnreachableDestinationExitsOne) {
  const RunResult r = TraceInH000("--src " + kNic0 +
                                  " --dst 198.18.0.201 --sport 49152 --dev nic0 --max-ttl 4 "
                                  "--timeout-ms 300 --json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const ptree trace = ParseJson(r.out);
  EXPECT_EQ(trace.get<std::string>("reached"), "false");
}

// Both spines silent (their ICMP dropped on output): the spine hop is
// missing, so exit 1, but the inventory leaves one choice for it.
TEST_F(CtlTraceTestbed, SilentSpineIsFilledFromTheGraph) {
  for (const std::string spine : {"s00", "s01"}) {
    const RunResult r =
        RunShell("ip netns exec " + kPrefix + spine + " iptables -A OUTPUT -p icmp -j DROP", dir_);
    if (r.exit_code != 0) GTEST_SKIP() << "iptables unavailable: " << r.err;
  }
  const RunResult r = TraceInH000("--src " + kNic0 + " --dst " + kNic1 +
                                  " --sport 49152 --dev nic0 --timeout-ms 300 --topology " +
                                  Quote(inventory_) + " --json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const ptree trace = ParseJson(r.out);
  EXPECT_EQ(trace.get<std::string>("reached"), "true");
  const auto hops = Items(trace.get_child("hops"));
  ASSERT_EQ(hops.size(), 4U) << r.out;
  EXPECT_EQ(hops[1].get<std::string>("status"), "silent");
  EXPECT_EQ(hops[1].get<std::string>("address"), "null");
  EXPECT_EQ(hops[2].get<std::string>("device"), "p0r1");
  const std::string spine = hops[2].get<std::string>("interface");
  EXPECT_EQ(trace.get<std::string>("path.status"), "ok");
  EXPECT_EQ(trace.get<int>("path.filled"), 1);
  std::vector<std::string> links;
  for (const ptree& l : Items(trace.get_child("path.links"))) links.push_back(l.data());
  EXPECT_THAT(links, ::testing::ElementsAre("h000.nic0-p0r0", "p0r0-" + spine, "p0r1-" + spine,
                                            "h000.nic1-p0r1"));
}

// A source address that is not on the host: bad input, exit 2.
TEST_F(CtlTraceTestbed, ForeignSourceAddressExitsTwo) {
  const RunResult r =
      TraceInH000("--src 198.18.0.3 --dst " + kNic1 + " --sport 49152 --dev nic0 --max-ttl 2");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("bind 198.18.0.3:49152"));
}

}  // namespace
}  // namespace hostmesh::ctl::testing
