// The pure glue between the agent and the tracer: pools -> 5-tuples,
// config -> ContinuousConfig, PathReport -> proto, path-length hints.
#include "agent/wiring/trace_plan.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "agent/upload/wire_messages.h"

namespace hostmesh::agent::wiring {
namespace {

using upload::ToProto;

using namespace std::chrono_literals;
using tracer::Ipv4;

constexpr const char* kConfig = R"(host: h000
transport: udp
analyzer:
  address: 127.0.0.1:1
  insecure: true
probe:
  dst_port: 4792
traceroute:
  rate_per_second: 30
  per_switch_rate_per_second: 6
  max_ttl: 6
  refresh_period: 10s
nics:
  - {name: nic0, rail: 0, ip: 198.18.0.1, netdev: nic0}
  - {name: nic1, rail: 1, ip: 198.18.0.5, netdev: nic1}
  - {name: nic2, rail: 2, ip: 198.18.0.9, netdev: nic2}
  - {name: nic3, rail: 3, ip: "fd00::1", netdev: nic3}
)";

Ipv4 Ip(const char* text) {
  return *Ipv4::Parse(text);
}

TEST(tracing_glue, TargetsAreEveryPairOfIpv4NicsTimesTheSourcePool) {
  const AgentConfig config = ParseAgentConfig(kConfig, "agent.yaml");
  const std::vector<std::vector<std::uint16_t>> pools = {
      {50000, 50001}, {50010}, {50020, 50021}, {50030}};
  const auto targets = TraceTargetsFrom(config, pools);
  // nic3 is IPv6: neither source nor destination. 2*2 + 1*2 + 2*2.
  ASSERT_EQ(targets.size(), 10U);
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint16_t>> seen;
  for (const tracer::TraceTarget& t : targets) {
    EXPECT_NE(t.src_nic, t.dst_nic);
    EXPECT_LT(t.dst_nic, 3U);
    EXPECT_EQ(t.tuple.src.ToString(), config.nics[t.src_nic].ip.ToString());
    EXPECT_EQ(t.tuple.dst.ToString(), config.nics[t.dst_nic].ip.ToString());
    EXPECT_EQ(t.tuple.dport, 4792);
    EXPECT_EQ(t.tuple.protocol, tracer::kIpProtoUdp);
    const auto& pool = pools[t.src_nic];
    EXPECT_NE(std::find(pool.begin(), pool.end(), t.tuple.sport), pool.end());
    seen.insert({t.src_nic, t.dst_nic, t.tuple.sport});
  }
  EXPECT_EQ(seen.size(), targets.size());
  // A pool list shorter than the NICs (a NIC not yet known) traces what it has.
  EXPECT_EQ(TraceTargetsFrom(config, {{50000}}).size(), 2U);
}

TEST(tracing_glue, ContinuousConfigComesFromTheTracerouteSection) {
  const AgentConfig config = ParseAgentConfig(kConfig, "agent.yaml");
  const tracer::ContinuousConfig c = ContinuousConfigFrom(config, 77);
  EXPECT_EQ(c.refresh_period, 10s);
  EXPECT_GE(c.report_period, c.refresh_period);
  EXPECT_EQ(c.budget.probes_per_second, 30);
  EXPECT_EQ(c.budget.per_first_hop_per_second, 6);
  EXPECT_EQ(c.request_template.max_ttl, 6);
  EXPECT_TRUE(c.request_template.destination_swallows);
  EXPECT_EQ(c.request_template.session, 77U);
  EXPECT_EQ(c.request_template.probe_timeout, kTraceProbeTimeout);
  // Every NIC's, by index, as TraceTarget::src_nic counts them.
  EXPECT_EQ(c.netdevs, (std::vector<std::string>{"nic0", "nic1", "nic2", "nic3"}));
}

TEST(tracing_glue, TraceLoadSaysWhenTheBudgetCannotKeepUp) {
  const AgentConfig config = ParseAgentConfig(kConfig, "agent.yaml");
  bool over = true;
  // 56 5-tuples * 4 probes / 10 s = 22.4/s of 30.
  EXPECT_NE(DescribeTraceLoad(config, 56, &over).find("56 5-tuples"), std::string::npos);
  EXPECT_FALSE(over);
  // 896 (8 NICs, 16 ports): 358/s, about every 119 s at 30/s.
  const std::string line = DescribeTraceLoad(config, 896, &over);
  EXPECT_TRUE(over);
  EXPECT_NE(line.find("about every 119 s"), std::string::npos) << line;
}

TEST(tracing_glue, DefaultsRefreshEightNicsOfSixteenPortsInTime) {
  AgentConfig config;  // the defaults an operator gets without a traceroute section
  bool over = true;
  // 896 5-tuples * 4 probes / 240 s = 15/s of 40.
  DescribeTraceLoad(config, 8 * 7 * 16, &over);
  EXPECT_FALSE(over);
}

TEST(tracing_glue, PathReportToProto) {
  tracer::PathReport r;
  r.tuple = {Ip("198.18.0.1"), Ip("198.18.0.5"), 50123, 4791, tracer::kIpProtoUdp};
  r.src_nic = 0;
  r.dst_nic = 1;
  r.hops = {{1, {}, tracer::HopStatus::kSilent, {}, 0},
            {2, Ip("198.19.0.1"), tracer::HopStatus::kTimeExceeded, 40us, 0},
            {3, Ip("198.19.0.4"), tracer::HopStatus::kTimeExceeded, 50us, 0},
            {4, Ip("198.18.0.5"), tracer::HopStatus::kInferredDestination, {}, 0}};
  r.reached_destination = true;
  r.changed = true;
  r.time = WallTime{std::chrono::seconds{1704067200}};
  const v1::PathReport p = ToProto(r);
  EXPECT_EQ(p.src_ip(), "198.18.0.1");
  EXPECT_EQ(p.dst_ip(), "198.18.0.5");
  EXPECT_EQ(p.src_port(), 50123U);
  EXPECT_EQ(p.dst_port(), 4791U);
  EXPECT_EQ(p.protocol(), 17U);
  EXPECT_EQ(p.src_nic(), 0U);
  EXPECT_EQ(p.dst_nic(), 1U);
  EXPECT_TRUE(p.reached_destination());
  EXPECT_TRUE(p.changed());
  EXPECT_EQ(p.time_ns(), 1704067200LL * 1'000'000'000);
  ASSERT_EQ(p.hops_size(), 4);
  EXPECT_EQ(p.hops(0).ttl(), 1U);
  EXPECT_EQ(p.hops(0).address(), "");  // silent: unknown, not a drop
  EXPECT_EQ(p.hops(1).address(), "198.19.0.1");
  EXPECT_EQ(p.hops(1).rtt_ns(), 40'000);
  EXPECT_EQ(p.hops(2).address(), "198.19.0.4");
  EXPECT_EQ(p.hops(3).address(), "198.18.0.5");
  EXPECT_EQ(p.hops(3).ttl(), 4U);
}

tracer::TraceResult Reached(const char* src, const char* dst, int switches) {
  tracer::TraceResult r;
  r.tuple = {Ip(src), Ip(dst), 50000, 4791, tracer::kIpProtoUdp};
  for (int ttl = 1; ttl <= switches + 1; ++ttl) r.hops.push_back({ttl, {}, {}, {}, 0});
  r.reached_destination = true;
  return r;
}

TEST(tracing_glue, PathLengthHintsByPairThenAnyPair) {
  PathLengthHints hints;
  const tracer::FiveTuple a{Ip("198.18.0.1"), Ip("198.18.0.5"), 50001, 4791, 17};
  const tracer::FiveTuple b{Ip("198.18.0.5"), Ip("198.18.0.9"), 50002, 4791, 17};
  EXPECT_EQ(hints.For(a), 0);
  hints.Learn(Reached("198.18.0.1", "198.18.0.5", 3));
  EXPECT_EQ(hints.For(a), 3);  // another port of the same pair
  EXPECT_EQ(hints.For(b), 3);  // a pair not traced yet: the last length seen
  hints.Learn(Reached("198.18.0.5", "198.18.0.9", 5));
  EXPECT_EQ(hints.For(a), 3);
  EXPECT_EQ(hints.For(b), 5);
  tracer::TraceResult silent = Reached("198.18.0.1", "198.18.0.5", 1);
  silent.reached_destination = false;  // proves nothing about the length
  hints.Learn(silent);
  EXPECT_EQ(hints.For(a), 3);
}

}  // namespace
}  // namespace hostmesh::agent::wiring
