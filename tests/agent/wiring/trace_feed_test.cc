// The probe loop's hand-over to the tracer that the agent and the simulator
// share: every pool's 5-tuples on the first call and after a rotation,
// nothing in between, and a lost probe's 5-tuple to retrace.
#include "agent/wiring/trace_feed.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "agent/wiring/options_from_config.h"

namespace hostmesh::agent::wiring {
namespace {

using namespace std::chrono_literals;

// (source NIC, destination NIC, source port) of each target, in order.
std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint16_t>> Keys(
    const std::vector<tracer::TraceTarget>& targets) {
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint16_t>> out;
  for (const tracer::TraceTarget& t : targets)
    out.emplace_back(t.src_nic, t.dst_nic, t.tuple.sport);
  return out;
}

constexpr const char* kConfig = R"(host: h000
transport: udp
analyzer:
  address: 127.0.0.1:1
  insecure: true
probe:
  interval: 100ms
  dst_port: 4792
ports:
  pool_size: 4
  rotation_period: 10s
  rotation_fraction: 0.5
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.1, netdev: nic0}
  - {name: nic1, rail: 1, ip: 198.18.0.5, netdev: nic1}
  - {name: nic2, rail: 2, ip: "fd00::1", netdev: nic2}
)";

TEST(trace_feed, HandsEveryPoolFirstThenOnlyAfterARotation) {
  const AgentConfig config = ParseAgentConfig(kConfig, "agent.yaml");
  const MonoTime start{};
  Scheduler scheduler(CoreOptionsFrom(config).scheduler, start, 7);
  TraceFeed feed(config);
  EXPECT_FALSE(feed.handed_any());

  const auto first = feed.TargetsIfRotated(scheduler);
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(feed.handed_any());
  // nic2 has no IPv4 address: 4 pool ports x (nic0 -> nic1, nic1 -> nic0).
  EXPECT_EQ(first->size(), 8U);
  EXPECT_FALSE(feed.TargetsIfRotated(scheduler).has_value()) << "no rotation, nothing to copy";

  // Past one rotation period the pools have new ports: handed over again.
  std::vector<ProbeOrder> due;
  for (MonoTime now = start; now < start + 11s; now += 100ms) scheduler.PopDue(now, due);
  const auto rotated = feed.TargetsIfRotated(scheduler);
  ASSERT_TRUE(rotated.has_value());
  EXPECT_EQ(rotated->size(), 8U);
  EXPECT_NE(Keys(*rotated), Keys(*first));
  EXPECT_FALSE(feed.TargetsIfRotated(scheduler).has_value());

  feed.Reset();  // a NIC reopened on new ports: every pool again
  EXPECT_FALSE(feed.handed_any());
  const auto again = feed.TargetsIfRotated(scheduler);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(Keys(*again), Keys(*rotated));
}

TEST(trace_feed, RetracesOnlyALostProbeBetweenIpv4Nics) {
  const AgentConfig config = ParseAgentConfig(kConfig, "agent.yaml");
  const TraceFeed feed(config);
  ProbeResult lost;
  lost.src_nic = 1;
  lost.dst_nic = 0;
  lost.src_port = 50123;
  lost.timeout = true;
  const auto tuple = feed.RetraceFor(lost);
  ASSERT_TRUE(tuple.has_value());
  EXPECT_EQ(tuple->src.ToString(), "198.18.0.5");
  EXPECT_EQ(tuple->dst.ToString(), "198.18.0.1");
  EXPECT_EQ(tuple->sport, 50123);
  EXPECT_EQ(tuple->dport, 4792);

  ProbeResult delivered = lost;
  delivered.timeout = false;
  EXPECT_FALSE(feed.RetraceFor(delivered).has_value());
  ProbeResult to_ipv6 = lost;
  to_ipv6.dst_nic = 2;
  EXPECT_FALSE(feed.RetraceFor(to_ipv6).has_value());
  ProbeResult unknown_nic = lost;
  unknown_nic.src_nic = 9;
  EXPECT_FALSE(feed.RetraceFor(unknown_nic).has_value());
}

}  // namespace
}  // namespace hostmesh::agent::wiring
