// The collector over a fake tree and a fake ethtool source: deltas between
// samples, counter resets, failures counted per source, and the wire form.
#include "agent/telemetry/telemetry_collector.h"

#include <gtest/gtest.h>

#include <map>

#include "agent/telemetry/telemetry_proto.h"
#include "tests/agent/telemetry/fake_sysfs.h"

namespace hostmesh::agent::telemetry {
namespace {

using testing::AddMlx5;
using testing::AddRxe;
using testing::FakeSysfs;
using testing::Mlx5Port;
using testing::SetPcie;

class FakeEthtool final : public EthtoolStatsSource {
 public:
  bool Read(const std::string& netdev, std::vector<EthtoolStat>* out, std::string* error) override {
    const auto it = stats.find(netdev);
    if (it == stats.end()) {
      *error = "ETHTOOL_GSSET_INFO: No such device";
      return false;
    }
    *out = it->second;
    return true;
  }
  std::map<std::string, std::vector<EthtoolStat>> stats;
};

constexpr std::int64_t kT0 = 1'700'000'000'000'000'000;
constexpr std::int64_t kPeriod = 10'000'000'000;

struct Rig {
  Rig() {
    Mlx5Port port;
    port.counters = {{"symbol_error", 100}, {"port_rcv_data", 1000}};
    AddMlx5(fs, "mlx5_0", "eth2", "0000:3b:00.0", port);
    SetPcie(fs, "0000:3b:00.0", "16", "16.0 GT/s PCIe", 0);
    AddRxe(fs, "rxe0", "eth0", {{"link_downed", 1}});
    ethtool.stats["eth2"] = {{"rx_crc_errors_phy", 50}, {"tx_prio3_pause", 10}};
    ethtool.stats["eth0"] = {{"peer_ifindex", 3}};
  }
  FakeSysfs fs;
  FakeEthtool ethtool;
};

std::vector<TelemetryNic> Nics() {
  return {{"nic0", "eth2", "mlx5_0", 1}, {"nic1", "eth0", "rxe0", 1}};
}

TEST(telemetry_collector, SecondSampleGivesDeltasOfEveryCounterReadTwice) {
  Rig rig;
  TelemetryCollector collector(rig.fs.root(), Nics(), &rig.ethtool);
  const TelemetrySample first = collector.Sample(kT0);
  ASSERT_EQ(first.readings.size(), 2U);
  EXPECT_FALSE(first.deltas[0]);
  EXPECT_EQ(first.readings[0][NicCounter::kSymbolError], 100U);

  rig.fs.Write("class/infiniband/mlx5_0/ports/1/counters/symbol_error", "4310\n");
  rig.fs.Write("class/infiniband/mlx5_0/ports/1/counters/port_rcv_data", "1500\n");
  rig.fs.Write("class/net/eth2/carrier_changes", "4\n");
  rig.ethtool.stats["eth2"] = {{"rx_crc_errors_phy", 4030}, {"tx_prio3_pause", 10}};
  const TelemetrySample second = collector.Sample(kT0 + kPeriod);
  ASSERT_TRUE(second.deltas[0]);
  const NicDelta& d = *second.deltas[0];
  EXPECT_EQ(d.start_ns, kT0);
  EXPECT_EQ(d.end_ns, kT0 + kPeriod);
  EXPECT_EQ(d[NicCounter::kSymbolError], 4210U);
  EXPECT_EQ(d[NicCounter::kPortRcvDataBytes], 2000U);
  EXPECT_EQ(d[NicCounter::kCarrierChanges], 2U);
  EXPECT_EQ(d[NicCounter::kRxFcsErrors], 3980U);
  EXPECT_EQ(d.tx_pfc_pause[3], 0U);  // read, did not move
  EXPECT_FALSE(d.tx_pfc_pause[2]);   // the driver has no such counter
  EXPECT_EQ(d[NicCounter::kLinkDowned], 0U);
  ASSERT_TRUE(d.pcie);
  EXPECT_FALSE(d.pcie->Downgraded());
  EXPECT_EQ(d.port_state, 4U);
  EXPECT_EQ(d.carrier, Carrier::kUp);
  EXPECT_EQ(collector.stats().samples, 2U);
  EXPECT_EQ(collector.stats().failures, (std::array<std::uint64_t, kSourceCount>{}));
}

TEST(telemetry_collector, AResetCounterCountsFromZeroAndIsReported) {
  NicReading before;
  before.time_ns = 1;
  before[NicCounter::kSymbolError] = 5000;
  before[NicCounter::kLinkDowned] = 2;
  before.rx_pfc_pause[3] = 70;
  NicReading after;
  after.time_ns = 2;
  after[NicCounter::kSymbolError] = 30;  // driver reloaded
  after[NicCounter::kLinkDowned] = 3;
  after.rx_pfc_pause[3] = 71;
  after[NicCounter::kRxFcsErrors] = 9;  // appeared: no delta yet
  const NicDelta d = Diff(before, after);
  EXPECT_EQ(d[NicCounter::kSymbolError], 30U);
  EXPECT_EQ(d[NicCounter::kLinkDowned], 1U);
  EXPECT_EQ(d.rx_pfc_pause[3], 1U);
  EXPECT_FALSE(d[NicCounter::kRxFcsErrors]);
  EXPECT_EQ(d.counter_resets, 1U);
}

TEST(telemetry_collector, FailuresAreCountedPerSourceAndNeverStopTheOtherNics) {
  Rig rig;
  rig.ethtool.stats.erase("eth0");
  std::vector<TelemetryNic> nics = Nics();
  nics.push_back({"nic2", "eth7", "mlx5_7", 1});  // configured, not present
  TelemetryCollector collector(rig.fs.root(), nics, &rig.ethtool);
  collector.Sample(kT0);
  const TelemetrySample s = collector.Sample(kT0 + kPeriod);
  const auto& f = collector.stats().failures;
  EXPECT_EQ(f[static_cast<std::size_t>(Source::kEthtool)], 4U);  // eth0, eth7, twice
  EXPECT_EQ(f[static_cast<std::size_t>(Source::kRdma)], 2U);     // mlx5_7, twice
  EXPECT_EQ(f[static_cast<std::size_t>(Source::kNetdev)], 2U);   // eth7, twice
  ASSERT_TRUE(s.deltas[0]);
  EXPECT_EQ(s.deltas[0]->read_failures, 0U);
  ASSERT_TRUE(s.deltas[2]);
  EXPECT_EQ(s.deltas[2]->read_failures, 3U);
  EXPECT_EQ(s.deltas[2]->port_state, 0U);
  for (const auto& c : s.deltas[2]->counters) EXPECT_FALSE(c);
}

TEST(telemetry_collector, NoEthtoolSourceMeansNoEthtoolCountersAndNoFailures) {
  Rig rig;
  TelemetryCollector collector(rig.fs.root(), {{"nic0", "eth2", "", 1}}, nullptr);
  const TelemetrySample s = collector.Sample(kT0);
  EXPECT_FALSE(s.readings[0][NicCounter::kRxFcsErrors]);
  EXPECT_EQ(s.readings[0][NicCounter::kCarrierChanges], 2U);
  // Without an RDMA device the netdev's PCI function is read.
  EXPECT_TRUE(s.readings[0].pcie);
  EXPECT_EQ(s.readings[0].total_failures(), 0U);
}

TEST(telemetry_proto, EveryCounterReadTwiceIsOnTheWirePriorityIncluded) {
  NicDelta d;
  d.start_ns = 10;
  d.end_ns = 20;
  d.counters[static_cast<std::size_t>(NicCounter::kSymbolError)] = 4210;
  d.counters[static_cast<std::size_t>(NicCounter::kLinkDowned)] = 0;
  d.tx_pfc_pause[3] = 500;
  d.port_state = 4;
  d.phys_state = 5;
  d.carrier = Carrier::kDown;
  d.pcie = PcieLink{8, 16, 16000, 16000};
  d.read_failures = 1;
  d.counter_resets = 2;
  const v1::NicTelemetry t = ToProto(3, d);
  EXPECT_EQ(t.nic(), 3U);
  EXPECT_EQ(t.start_ns(), 10);
  EXPECT_EQ(t.end_ns(), 20);
  ASSERT_EQ(t.deltas_size(), 3);
  EXPECT_EQ(t.deltas(0).counter(), v1::NIC_COUNTER_LINK_DOWNED);
  EXPECT_EQ(t.deltas(0).delta(), 0U);
  EXPECT_FALSE(t.deltas(0).has_priority());
  EXPECT_EQ(t.deltas(1).counter(), v1::NIC_COUNTER_SYMBOL_ERROR);
  EXPECT_EQ(t.deltas(1).delta(), 4210U);
  EXPECT_EQ(t.deltas(2).counter(), v1::NIC_COUNTER_TX_PAUSE);
  EXPECT_EQ(t.deltas(2).priority(), 3U);
  EXPECT_EQ(t.deltas(2).delta(), 500U);
  EXPECT_EQ(t.port_state(), 4U);
  EXPECT_EQ(t.phys_state(), 5U);
  EXPECT_EQ(t.carrier(), v1::CARRIER_DOWN);
  EXPECT_EQ(t.pcie().current_width(), 8U);
  EXPECT_EQ(t.pcie().max_speed_mts(), 16000U);
  EXPECT_EQ(t.read_failures(), 1U);
  EXPECT_EQ(t.counter_resets(), 2U);
}

TEST(telemetry_proto, EveryCounterHasAWireName) {
  for (std::size_t i = 0; i < kNicCounterCount; ++i) {
    EXPECT_NE(ToProto(static_cast<NicCounter>(i)), v1::NIC_COUNTER_UNSPECIFIED) << i;
  }
}

}  // namespace
}  // namespace hostmesh::agent::telemetry
