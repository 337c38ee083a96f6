// The tracer on the emulated rail fabric (deploy/testbed/fabric), 4 hosts x 4
// rails x 4 spines with the switches' ICMP limits lifted: 64 source ports
// from h000 nic0 to h000 nic1, each traced path compared with `fabric
// truth-path` (the switches' own FIB lookups) and with Linux traceroute(8)
// for the same 5-tuple. Needs root; skips otherwise.
//
// The traces run in a forked child that enters h000's namespace with
// setns(CLONE_NEWNET), so the test process's own namespace is never touched;
// the child writes plain structs back through a pipe.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>
#include <type_traits>

#include "tests/support/fabric_shell.h"
#include "tracer/probe_tag.h"
#include "tracer/trace_engine.h"

namespace hostmesh::tracer {
namespace {

const std::string kPrefix = hostmesh::testing::TestPrefix("tr");
constexpr int kHosts = 4;
constexpr std::uint16_t kFirstPort = 49152;
constexpr int kPorts = 64;
constexpr std::uint8_t kProbeTos = 106;  // the agent's default probe class

// Addresses per deploy/testbed/README.md: NIC link (h, r) has index r*H + h,
// the NIC holds 198.18.0.0 + 2*index + 1.
Ipv4 NicIp(int host, int rail) {
  return Ipv4{(198U << 24) | (18U << 16) |
              static_cast<std::uint32_t>(2 * (rail * kHosts + host) + 1)};
}

std::optional<std::string> Shell(const std::string& command) {
  return hostmesh::testing::ShellWithPrefix(kPrefix, command);
}

std::string Fabric(const std::string& args) {
  return hostmesh::testing::FabricCommand(args);
}

// One trace as the child reports it.
struct TracedPath {
  std::uint16_t sport = 0;
  bool swallowed = false;  // traced with our own receiver on the destination
  TraceEnd end = TraceEnd::kError;
  bool reached = false;
  int hop_count = 0;
  std::array<std::uint32_t, kMaxTtl> hops{};
  std::array<HopStatus, kMaxTtl> status{};
  std::array<char, 128> error{};
};
static_assert(std::is_trivially_copyable_v<TracedPath>);

TracedPath Pack(std::uint16_t sport, bool swallowed, const TraceResult& r) {
  TracedPath p;
  p.sport = sport;
  p.swallowed = swallowed;
  p.end = r.end;
  p.reached = r.reached_destination;
  p.hop_count = static_cast<int>(r.hops.size());
  for (std::size_t i = 0; i < r.hops.size() && i < p.hops.size(); ++i) {
    p.hops[i] = r.hops[i].address.value;
    p.status[i] = r.hops[i].status;
  }
  std::snprintf(p.error.data(), p.error.size(), "%s", r.error.c_str());
  return p;
}

// A receiver on the destination NIC's RoCEv2 port, like the agent's: the
// probes reaching it are consumed, nobody answers Port Unreachable.
int OpenReceiver(Ipv4 ip) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(ip.value);
  addr.sin_port = htons(kRoceV2Port);
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Runs in the child, inside the host namespace.
std::vector<TracedPath> TraceAll(Ipv4 src, Ipv4 dst, std::string& error) {
  std::vector<TracedPath> out;
  TraceRequest request;
  request.tuple.src = src;
  request.tuple.dst = dst;
  request.netdev = "nic0";
  request.max_ttl = 8;
  for (int i = 0; i < kPorts; ++i) {
    request.tuple.sport = static_cast<std::uint16_t>(kFirstPort + i);
    request.generation = static_cast<std::uint32_t>(i);
    out.push_back(Pack(request.tuple.sport, false, TraceOnce(request, kProbeTos)));
  }
  // The agent's case: the destination's receiver swallows the probe.
  const int receiver = OpenReceiver(dst);
  if (receiver < 0) {
    error = std::string("receiver: ") + std::strerror(errno);
    return out;
  }
  request.destination_swallows = true;
  request.switch_hops = 3;
  for (int i = 0; i < 4; ++i) {
    request.tuple.sport = static_cast<std::uint16_t>(kFirstPort + i);
    request.generation = static_cast<std::uint32_t>(100 + i);
    out.push_back(Pack(request.tuple.sport, true, TraceOnce(request, kProbeTos)));
  }
  ::close(receiver);
  return out;
}

std::vector<TracedPath> TraceInNamespace(const std::string& ns, Ipv4 src, Ipv4 dst,
                                         std::string& error) {
  int fds[2];
  if (::pipe(fds) != 0) {
    error = "pipe failed";
    return {};
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string child_error;
    std::vector<TracedPath> paths;
    const int ns_fd = ::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (ns_fd < 0 || ::setns(ns_fd, CLONE_NEWNET) != 0) {
      child_error = "cannot enter namespace " + ns + ": " + std::strerror(errno);
    } else {
      paths = TraceAll(src, dst, child_error);
    }
    const std::size_t sizes[2] = {child_error.size(), paths.size()};
    (void)!::write(fds[1], sizes, sizeof(sizes));
    (void)!::write(fds[1], child_error.data(), child_error.size());
    (void)!::write(fds[1], paths.data(), paths.size() * sizeof(TracedPath));
    ::_exit(0);
  }
  ::close(fds[1]);
  std::vector<TracedPath> paths;
  std::size_t sizes[2] = {};
  FILE* in = ::fdopen(fds[0], "r");
  if (pid < 0 || std::fread(sizes, sizeof(sizes), 1, in) != 1) {
    error = "child died before reporting";
  } else {
    error.resize(sizes[0]);
    paths.resize(sizes[1]);
    if ((sizes[0] > 0 && std::fread(error.data(), sizes[0], 1, in) != 1) ||
        (sizes[1] > 0 && std::fread(paths.data(), sizeof(TracedPath), sizes[1], in) != sizes[1])) {
      error = "short read from child";
    }
  }
  std::fclose(in);
  if (pid > 0) ::waitpid(pid, nullptr, 0);
  return paths;
}

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// `fabric truth-path`: the ingress address of every switch row (the rows
// between the source and the destination host).
std::vector<std::string> TruthHops(Ipv4 src, Ipv4 dst, std::uint16_t sport) {
  const auto out = Shell(
      Fabric("truth-path " + src.ToString() + " " + dst.ToString() + " " + std::to_string(sport)));
  EXPECT_TRUE(out) << "truth-path " << sport;
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(out.value_or(""));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] != '#') rows.push_back(Words(line));
  }
  std::vector<std::string> hops;
  for (std::size_t i = 1; i + 1 < rows.size(); ++i) hops.push_back(rows[i].at(2));
  return hops;
}

// traceroute(8) for the same 5-tuple: -U fixes the destination port, --sport
// the source port (it implies one probe at a time), -i binds to the NIC.
std::vector<std::string> TracerouteHops(Ipv4 src, Ipv4 dst, std::uint16_t sport) {
  const auto out = Shell("ip netns exec " + kPrefix +
                         "h000 traceroute -n -U -p 4791 --sport=" + std::to_string(sport) + " -s " +
                         src.ToString() + " -i nic0 -q 1 -w 1 -m 8 " + dst.ToString());
  EXPECT_TRUE(out) << "traceroute " << sport;
  std::vector<std::string> hops;
  std::istringstream lines(out.value_or(""));
  std::string line;
  std::getline(lines, line);  // "traceroute to ..."
  while (std::getline(lines, line)) {
    const auto words = Words(line);
    if (words.size() >= 2) hops.push_back(words[1]);  // "*" when silent
  }
  return hops;
}

class TracerTestbed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces";
    if (!Shell(Fabric("up --hosts 4 --rails 4 --spines 4 --icmp-unlimited") + " >&2")) {
      GTEST_FAIL() << "`fabric up` failed as root (its log above)";
    }
    up_ = true;
    // --icmp-unlimited lifts the switches' ICMP limits, not the hosts': h000
    // itself answers Port Unreachable for nic1, and Linux's per-destination
    // limit (icmp_ratelimit, ~1/s after a burst of 6) would silence it after
    // a few back-to-back traces, for traceroute(8) as much as for us.
    ASSERT_TRUE(Shell("ip netns exec " + kPrefix +
                      "h000 sysctl -q -w net.ipv4.icmp_ratelimit=0 "
                      "net.ipv4.icmp_msgs_per_sec=1000000 net.ipv4.icmp_msgs_burst=1000000"));
  }
  void TearDown() override {
    if (up_) Shell(Fabric("down") + " >&2");
  }
  bool up_ = false;
};

TEST_F(TracerTestbed, SixtyFourPortsMatchTruthAndTraceroute) {
  const Ipv4 src = NicIp(0, 0);
  const Ipv4 dst = NicIp(0, 1);
  std::string error;
  const auto paths = TraceInNamespace(kPrefix + "h000", src, dst, error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(paths.size(), static_cast<std::size_t>(kPorts + 4));

  std::set<std::vector<std::string>> distinct;
  for (const TracedPath& p : paths) {
    SCOPED_TRACE("sport " + std::to_string(p.sport) + (p.swallowed ? " (swallowed)" : ""));
    ASSERT_STREQ(p.error.data(), "");
    EXPECT_TRUE(p.reached);
    EXPECT_EQ(p.end, p.swallowed ? TraceEnd::kInferredDestination : TraceEnd::kDestination);
    ASSERT_GE(p.hop_count, 1);
    EXPECT_EQ(p.hops[static_cast<std::size_t>(p.hop_count - 1)], dst.value);
    std::vector<std::string> ours;
    for (int i = 0; i + 1 < p.hop_count; ++i) {
      ours.push_back(Ipv4{p.hops[static_cast<std::size_t>(i)]}.ToString());
    }
    const auto truth = TruthHops(src, dst, p.sport);
    EXPECT_EQ(ours, truth);
    if (p.swallowed) continue;
    auto traceroute = TracerouteHops(src, dst, p.sport);
    ASSERT_FALSE(traceroute.empty());
    EXPECT_EQ(traceroute.back(), dst.ToString());
    traceroute.pop_back();
    EXPECT_EQ(ours, traceroute);
    distinct.insert(ours);
  }
  // ECMP on the source port: 64 ports must spread over the 4 spines.
  EXPECT_EQ(distinct.size(), 4U);
}

}  // namespace
}  // namespace hostmesh::tracer
