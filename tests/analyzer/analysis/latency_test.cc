// Latency hotspots and host processing delay, kept apart from each other and
// from drops.

#include <gtest/gtest.h>

#include <map>

#include "tests/analyzer/analysis/fleet_test_base.h"

namespace hostmesh::analysis::testing {
namespace {

using LatencyTest = FleetTest;

TEST_F(LatencyTest, DelayOnOneLinkIsAHotspotAndNoDrop) {
  const LinkId slow = fleet_.RailSpine(2, 2);
  const auto r = RunWindow(0, Faults{.link_delay_ns = {{slow, 2'000'000}}});

  EXPECT_EQ(BlamedLinks(r.latency), std::vector<LinkId>{slow});
  ASSERT_FALSE(r.latency.links.empty());
  EXPECT_EQ(r.latency.links.front().link, slow);
  EXPECT_TRUE(r.loss.culprits.empty());
  EXPECT_TRUE(r.processing_flags.empty());
  // ~1/8 of the probes cross it: P90 stays low, P99 sees the 2 ms.
  EXPECT_LT(r.sla.cluster.latency.p50, 20'000);
  EXPECT_GT(r.sla.cluster.latency.p99, 1'900'000);
}

TEST_F(LatencyTest, CpuOverloadFlagsThatHostOnly) {
  const auto r = RunWindow(0, Faults{.host_processing_ns = {{5, 400'000}}});

  ASSERT_EQ(r.processing_flags.size(), 1u);
  EXPECT_EQ(r.processing_flags.front().host, 5u);
  EXPECT_GT(r.processing_flags.front().p90_ns, 400'000);
  EXPECT_TRUE(r.latency.culprits.empty());  // the network is fine
  EXPECT_TRUE(r.loss.culprits.empty());
  for (const auto& h : r.sla.hosts) {
    if (h.host == 5) {
      EXPECT_GT(h.sla.processing.p50, 400'000);
    } else {
      EXPECT_LT(h.sla.processing.p99, 50'000);
    }
    EXPECT_LT(h.sla.latency.p99, 20'000);
  }
}

// A host whose agent sheds load for CPU pressure is short of CPU by its own
// word: its p90 above the fleet's by the minimum excess flags it, where the
// fleet-relative factor (there to tell overload from host-type differences)
// would not. Shedding for memory says nothing about CPU.
TEST_F(LatencyTest, AHostSheddingForCpuIsFlaggedBelowTheFactor) {
  Faults faults;
  for (HostId h = 0; h < 8; ++h) faults.host_processing_ns[h] = 200'000;
  faults.host_processing_ns[5] = 600'000;  // about 2.8x the fleet's p90, over it by 400 us
  auto r = RunWindow(0, faults);
  EXPECT_TRUE(r.processing_flags.empty()) << "under proc_factor without the agent's word";

  analysis_.NoteShedding(5, kT0 + 20 * kSecond, 0.25, kT0 + 19 * kSecond, "agent cpu wait 90%",
                         true);
  analysis_.NoteShedding(3, kT0 + 20 * kSecond, 0.5, kT0 + 19 * kSecond, "host memory pressure 30%",
                         false);
  faults.host_processing_ns[3] = 600'000;
  r = RunWindow(1, faults);
  ASSERT_EQ(r.shedding.size(), 2u);
  ASSERT_EQ(r.processing_flags.size(), 1u);
  EXPECT_EQ(r.processing_flags.front().host, 5u);
  EXPECT_TRUE(r.processing_flags.front().shedding);
  EXPECT_LT(r.processing_flags.front().p90_ns, 3 * r.processing_flags.front().fleet_median_p90_ns);
}

TEST_F(LatencyTest, SlaRowsForClusterRailsAndHosts) {
  const auto r = RunWindow(0, Faults{.link_loss = {{fleet_.RailSpine(0, 0), 1.0}}});
  EXPECT_EQ(r.sla.hosts.size(), 8u);
  EXPECT_EQ(r.sla.rails.size(), 4u);
  EXPECT_EQ(r.sla.cluster.probes, 8u * 4 * 200);
  std::uint64_t rail_probes = 0;
  for (const auto& rail : r.sla.rails) rail_probes += rail.sla.probes;
  EXPECT_EQ(rail_probes, r.sla.cluster.probes);
  const auto& lat = r.sla.cluster.latency;
  EXPECT_LE(lat.p50, lat.p90);
  EXPECT_LE(lat.p90, lat.p99);
  EXPECT_LE(lat.p99, lat.p999);
  // Latency 8-12 us by construction; the sketch answers within 1%.
  EXPECT_GE(lat.p50, 8'000 * 0.99);
  EXPECT_LE(lat.p999, 12'000 * 1.01);
  EXPECT_NEAR(
      r.sla.cluster.network_drop_rate,
      static_cast<double>(r.sla.cluster.timeouts) / static_cast<double>(r.sla.cluster.probes),
      1e-12);
}

// Rails come from the agents' Hellos: a host that cables NIC 0 to rail 3 and
// NIC 3 to rail 0 has its probes counted on those rails.
TEST_F(LatencyTest, RailsFromTheHelloPlaceProbesPerRail) {
  for (HostId h = 0; h < 8; ++h) analysis_.SetRails(h, {3, 1, 2, 0});
  analysis_.SetRails(0, {7, 1, 2, 0});
  const auto r = RunWindow(0, Faults{.nic_loss = {{{0, 0}, 1.0}}});
  std::map<int, SlaRow> rails;
  for (const auto& row : r.sla.rails) rails[row.rail] = row.sla;
  ASSERT_EQ(rails.size(), 5u);
  EXPECT_EQ(rails[7].probes, 200u);  // host 0's NIC 0 alone
  EXPECT_EQ(rails[3].probes, 7u * 200);
  EXPECT_EQ(rails[7].rnic_drops, rails[7].probes);  // every probe it sent timed out
  EXPECT_EQ(rails[1].probes, 8u * 200);
}

}  // namespace
}  // namespace hostmesh::analysis::testing

namespace hostmesh::analysis::testing {
namespace {

using HotspotTest = FleetTest;

TEST_F(HotspotTest, TwentyFiveMicrosecondsOnOneLinkIsAHotspotOverItsBaseline) {
  const LinkId congested = fleet_.RailSpine(1, 2);
  const auto r = RunWindow(0, Faults{.link_delay_ns = {{congested, 25'000}}});
  ASSERT_EQ(r.latency.culprits.size(), 1u);
  EXPECT_EQ(r.latency.culprits.front().component.link, congested);
  EXPECT_NEAR(r.latency.culprits.front().added_latency_ns, 25'000, 5'000);
  EXPECT_TRUE(r.loss.culprits.empty());
}

TEST_F(HotspotTest, ASlowHostIsNoHotspot) {
  // A host's own scheduling delay is processing delay, not the wire.
  const auto r = RunWindow(0, Faults{.host_processing_ns = {{3, 2'000'000}}});
  EXPECT_TRUE(r.latency.culprits.empty());
  ASSERT_EQ(r.processing_flags.size(), 1u);
  EXPECT_EQ(r.processing_flags.front().host, 3u);
}

TEST_F(HotspotTest, AHealthyFleetHasNoHotspotWindowAfterWindow) {
  for (int w = 0; w < 10; ++w) EXPECT_TRUE(RunWindow(w, Faults{}).latency.culprits.empty());
}

}  // namespace
}  // namespace hostmesh::analysis::testing
