// The UDP transport on the emulated rail fabric (deploy/testbed/fabric):
// 2 hosts x 4 rails x 2 spines, the probe loop running in host h000's network
// namespace, then a gray failure on one rail-to-spine link. Needs root.
//
// The probe loop runs in a forked child that enters the namespace with
// setns(CLONE_NEWNET), so the test process's own namespace is never touched;
// the child writes its results back through a pipe.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <type_traits>

#include "agent/config/agent_config.h"
#include "tests/agent/udp/real_time_probe_loop.h"
#include "tests/support/fabric_shell.h"

namespace hostmesh::agent::udp {
namespace {

using namespace std::chrono_literals;

const std::string kPrefix = hostmesh::testing::TestPrefix("u");

// Runs a command with the fabric prefix set; returns its stdout, or nullopt on failure.
std::optional<std::string> Shell(const std::string& command) {
  return hostmesh::testing::ShellWithPrefix(kPrefix, command);
}

std::string Fabric(const std::string& args) {
  return hostmesh::testing::FabricCommand(args);
}

// What the child sends back: plain structs, copied as bytes.
static_assert(std::is_trivially_copyable_v<ProbeResult>);
static_assert(std::is_trivially_copyable_v<UdpNicCounters>);

template <typename T>
void WriteAll(int fd, const T* data, std::size_t count) {
  const auto* bytes = reinterpret_cast<const char*>(data);
  std::size_t left = count * sizeof(T);
  while (left > 0) {
    const ssize_t n = ::write(fd, bytes, left);
    if (n <= 0) return;
    bytes += n;
    left -= static_cast<std::size_t>(n);
  }
}

template <typename T>
bool ReadAll(int fd, T* data, std::size_t count) {
  auto* bytes = reinterpret_cast<char*>(data);
  std::size_t left = count * sizeof(T);
  while (left > 0) {
    const ssize_t n = ::read(fd, bytes, left);
    if (n <= 0) return false;
    bytes += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

struct ChildRun {
  std::string error;  // empty when the child ran
  std::vector<ProbeResult> results;
  std::vector<UdpNicCounters> counters;
};

UdpTransportOptions OptionsFrom(const AgentConfig& config) {
  UdpTransportOptions options;
  for (const NicConfig& nic : config.nics) options.nics.push_back({nic.name, nic.netdev, nic.ip});
  options.dst_port = config.probe.dst_port;
  options.ttl = config.probe.hop_limit;
  options.traffic_class = config.probe.traffic_class;
  return options;
}

// The probe loop in `ns` for `probing` (plus the timeout to decide every probe).
ChildRun ProbeInNamespace(const std::string& ns, const UdpTransportOptions& options,
                          std::chrono::nanoseconds interval, std::chrono::nanoseconds probing) {
  ChildRun run;
  int fds[2];
  if (::pipe(fds) != 0) {
    run.error = "pipe failed";
    return run;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string error;
    const int ns_fd = ::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (ns_fd < 0 || ::setns(ns_fd, CLONE_NEWNET) != 0) {
      error = "cannot enter namespace " + ns + ": " + std::strerror(errno);
    }
    testing::LoopRun loop;
    if (error.empty()) {
      loop = testing::RunProbeLoop(options, interval, probing, 700ms);
      if (!loop.open_errors.empty()) error = loop.open_errors.front();
    }
    const std::size_t sizes[3] = {error.size(), loop.results.size(), loop.counters.size()};
    WriteAll(fds[1], sizes, 3);
    WriteAll(fds[1], error.data(), error.size());
    WriteAll(fds[1], loop.results.data(), loop.results.size());
    WriteAll(fds[1], loop.counters.data(), loop.counters.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::size_t sizes[3] = {};
  if (pid < 0 || !ReadAll(fds[0], sizes, 3)) {
    run.error = "child died before reporting";
  } else {
    run.error.resize(sizes[0]);
    run.results.resize(sizes[1]);
    run.counters.resize(sizes[2]);
    if (!ReadAll(fds[0], run.error.data(), sizes[0]) ||
        !ReadAll(fds[0], run.results.data(), sizes[1]) ||
        !ReadAll(fds[0], run.counters.data(), sizes[2])) {
      run.error = "short read from child";
    }
  }
  ::close(fds[0]);
  if (pid > 0) ::waitpid(pid, nullptr, 0);
  return run;
}

class UdpTransportTestbed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to build network namespaces";
    if (!Shell(Fabric("up --hosts 2 --rails 4 --spines 2") + " >&2")) {
      GTEST_FAIL() << "`fabric up` failed as root (its log above)";
    }
    up_ = true;
    const auto text = Shell(Fabric("agent-config h000"));
    ASSERT_TRUE(text);
    config_ = ParseAgentConfig(*text, "fabric agent-config h000");
    ASSERT_EQ(config_.nics.size(), 4U);
  }
  void TearDown() override {
    if (up_) Shell(Fabric("down") + " >&2");
  }

  std::string Ip(NicId nic) const { return config_.nics.at(nic).ip.ToString(); }

  // Which (src, dst, sport) cross rail switch 0's link to spine 0: asked of
  // the switches' own FIBs (`ip route get`, as `fabric truth-path` does), one
  // `ip -batch` per source rail switch. The 5-tuple crosses p0r0-s00 when its
  // rail switch picks spine s00 and either end is on rail 0.
  std::map<std::tuple<NicId, NicId, std::uint16_t>, bool> OverP0r0S00(
      const std::vector<ProbeResult>& results) {
    std::map<NicId, std::vector<std::tuple<NicId, NicId, std::uint16_t>>> by_src;
    std::set<std::tuple<NicId, NicId, std::uint16_t>> seen;
    for (const ProbeResult& r : results) {
      if (seen.insert({r.src_nic, r.dst_nic, r.src_port}).second) {
        by_src[r.src_nic].push_back({r.src_nic, r.dst_nic, r.src_port});
      }
    }
    std::map<std::tuple<NicId, NicId, std::uint16_t>, bool> over;
    for (const auto& [src, tuples] : by_src) {
      std::ostringstream batch;
      for (const auto& [s, d, port] : tuples) {
        batch << "route get " << Ip(d) << " from " << Ip(s) << " iif h000 ipproto udp sport "
              << port << " dport 4791\n";
      }
      const std::string file = "/tmp/" + kPrefix + "batch";
      FILE* f = std::fopen(file.c_str(), "w");
      std::fputs(batch.str().c_str(), f);
      std::fclose(f);
      const auto out = Shell("ip -n " + kPrefix + "p0r" + std::to_string(config_.nics[src].rail) +
                             " -batch " + file);
      std::remove(file.c_str());
      EXPECT_TRUE(out);
      if (!out) continue;
      // One "DST from SRC via X dev sNN" line (plus a cache line) per query, in order.
      std::istringstream lines(*out);
      std::string line;
      std::size_t i = 0;
      while (std::getline(lines, line) && i < tuples.size()) {
        const auto dev = line.find(" dev ");
        if (line.find(" from ") == std::string::npos || dev == std::string::npos) continue;
        const std::string spine = line.substr(dev + 5, 3);
        const auto& [s, d, port] = tuples[i++];
        over[tuples[i - 1]] =
            spine == "s00" && (config_.nics[s].rail == 0 || config_.nics[d].rail == 0);
      }
      EXPECT_EQ(i, tuples.size()) << *out;
    }
    return over;
  }

  bool up_ = false;
  AgentConfig config_;
};

TEST_F(UdpTransportTestbed, AllProbesArriveThenAGrayLinkDropsExactlyItsFiveTuples) {
  const UdpTransportOptions options = OptionsFrom(config_);
  const std::string ns = kPrefix + "h000";

  // Healthy fabric: every probe arrives with four kernel timestamps.
  const ChildRun healthy = ProbeInNamespace(ns, options, 50ms, 3s);
  ASSERT_EQ(healthy.error, "");
  ASSERT_GT(healthy.results.size(), 4U * 50);  // 4 NICs x 60 probes
  std::vector<std::int64_t> one_way;
  std::vector<std::int64_t> processing;
  for (const ProbeResult& r : healthy.results) {
    SCOPED_TRACE(::testing::Message() << r.src_nic << "->" << r.dst_nic << " sport " << r.src_port);
    ASSERT_FALSE(r.timeout);
    EXPECT_NE(r.src_nic, r.dst_nic);
    ASSERT_TRUE(r.app_send_ns && r.nic_send_ns && r.nic_recv_ns && r.app_recv_ns);
    EXPECT_EQ(r.send_timestamp_source, TimestampSource::kKernel);
    EXPECT_EQ(r.recv_timestamp_source, TimestampSource::kKernel);
    const std::int64_t latency = r.nic_recv_ns - r.nic_send_ns;
    const std::int64_t delay = (r.app_recv_ns - r.app_send_ns) - latency;
    // Per probe, what the mechanism guarantees: the four stamps in order, and
    // the whole round within the timeout (the tracker's rule for "received").
    EXPECT_GT(latency, 0);
    EXPECT_GT(delay, 0);
    EXPECT_LT(latency + delay, std::chrono::nanoseconds(testing::kProbeTimeout).count());
    one_way.push_back(latency);
    processing.push_back(delay);
  }
  std::sort(one_way.begin(), one_way.end());
  std::sort(processing.begin(), processing.end());
  const auto pct = [](const std::vector<std::int64_t>& v, double q) {
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
  };
  // Typical figures, as medians: a busy 2-core machine may defer a few
  // deliveries to ksoftirqd or wake the prober late, which moves single
  // probes, not the median (veth delivery takes tens of microseconds).
  EXPECT_LT(pct(one_way, 0.5), 1'000'000);
  EXPECT_LT(pct(processing, 0.5), 10'000'000);
  std::printf(
      "healthy: %zu probes; one-way latency p50 %lld ns p99 %lld ns max %lld ns; "
      "processing delay p50 %lld ns p99 %lld ns max %lld ns\n",
      one_way.size(), static_cast<long long>(pct(one_way, 0.5)),
      static_cast<long long>(pct(one_way, 0.99)), static_cast<long long>(one_way.back()),
      static_cast<long long>(pct(processing, 0.5)), static_cast<long long>(pct(processing, 0.99)),
      static_cast<long long>(processing.back()));
  for (const UdpNicCounters& c : healthy.counters) {
    EXPECT_EQ(c.tx_stamps, c.sends);
    EXPECT_EQ(c.send_errors + c.send_retry_later + c.socket_errors + c.icmp_errors, 0U);
    EXPECT_EQ(c.tx_stamps_lost + c.tx_stamps_unmatched + c.implausible_stamps, 0U);
  }

  // Gray failure on p0r0-s00: exactly the 5-tuples hashed over it time out.
  ASSERT_TRUE(Shell(Fabric("fault add gray --link p0r0-s00") + " >&2"));
  const ChildRun gray = ProbeInNamespace(ns, options, 50ms, 3s);
  ASSERT_EQ(gray.error, "");
  ASSERT_GT(gray.results.size(), 4U * 50);
  const auto over = OverP0r0S00(gray.results);
  std::size_t expected_timeouts = 0;
  std::size_t timeouts = 0;
  for (const ProbeResult& r : gray.results) {
    const bool crosses = over.at({r.src_nic, r.dst_nic, r.src_port});
    EXPECT_EQ(r.timeout, crosses) << r.src_nic << "->" << r.dst_nic << " sport " << r.src_port;
    expected_timeouts += crosses ? 1 : 0;
    timeouts += r.timeout ? 1 : 0;
  }
  std::printf("gray p0r0-s00: %zu probes, %zu timed out, %zu predicted\n", gray.results.size(),
              timeouts, expected_timeouts);
  EXPECT_GT(expected_timeouts, 10U);  // about a quarter of the probes
  EXPECT_LT(expected_timeouts, gray.results.size());

  // The switches' FIBs and `fabric truth-path` agree (spot check).
  for (std::size_t i = 0; i < gray.results.size(); i += gray.results.size() / 4) {
    const ProbeResult& r = gray.results[i];
    const auto path = Shell(Fabric("truth-path " + Ip(r.src_nic) + " " + Ip(r.dst_nic) + " " +
                                   std::to_string(r.src_port)));
    ASSERT_TRUE(path);
    // Lines "device ingress_if ingress_ip egress_if": the link is crossed when
    // p0r0 sends to s00 or s00 sends to p0r0.
    bool crosses = false;
    std::istringstream lines(*path);
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("#")) continue;
      std::istringstream fields(line);
      std::string device, in_if, in_ip, out_if;
      fields >> device >> in_if >> in_ip >> out_if;
      crosses |= (device == "p0r0" && out_if == "s00") || (device == "s00" && out_if == "p0r0");
    }
    EXPECT_EQ(crosses, over.at({r.src_nic, r.dst_nic, r.src_port})) << *path;
  }
}

}  // namespace
}  // namespace hostmesh::agent::udp
