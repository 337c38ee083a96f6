// The collector over a fake tree and a fake ethtool source: deltas between
// samples, counter resets, failures counted per source, back-off of values
// whose reads fail, the exclusion list, at most one read per period, and the
// wire form. Time is passed in: no test waits.
#include "agent/telemetry/telemetry_collector.h"

#include <gtest/gtest.h>

#include <map>

#include "agent/telemetry/telemetry_proto.h"
#include "tests/agent/telemetry/fake_sysfs.h"

namespace hostmesh::agent::telemetry {
namespace {

using namespace std::chrono_literals;
using testing::AddMlx5;
using testing::AddRxe;
using testing::FakeSysfs;
using testing::Mlx5Port;
using testing::OpenCounter;
using testing::SetPcie;

class FakeEthtool final : public EthtoolStatsSource {
 public:
  bool Read(const std::string& netdev, std::vector<EthtoolStat>* out, std::string* error) override {
    ++reads[netdev];
    const auto it = stats.find(netdev);
    if (it == stats.end()) {
      *error = "ETHTOOL_GSSET_INFO: No such device";
      return false;
    }
    *out = it->second;
    return true;
  }
  std::map<std::string, std::vector<EthtoolStat>> stats;
  std::map<std::string, int> reads;  // ioctls per netdev
};

constexpr std::int64_t kT0 = 1'700'000'000'000'000'000;
constexpr std::int64_t kPeriod = 10'000'000'000;

// A sample `since` the start (monotonic and realtime); throws, failing the
// test, when the collector refuses to read.
TelemetrySample Read(TelemetryCollector& collector, std::chrono::nanoseconds since) {
  return collector.Sample(MonoTime{} + since, kT0 + since.count()).value();
}

std::uint64_t Failures(const TelemetryCollector& collector, Source source) {
  return collector.stats().failures[static_cast<std::size_t>(source)];
}

std::vector<ExcludeRule> Rules(std::initializer_list<const char*> entries) {
  std::vector<ExcludeRule> rules;
  for (const char* entry : entries) {
    std::string why;
    const std::optional<ExcludeRule> rule = ParseExcludeRule(entry, &why);
    EXPECT_TRUE(rule) << entry << ": " << why;
    if (rule) rules.push_back(*rule);
  }
  return rules;
}

CollectorOptions Options(std::vector<ExcludeRule> exclude = {}) {
  CollectorOptions options;
  options.period = 10s;
  options.max_backoff = 1h;
  options.exclude = TelemetryExclude(std::move(exclude));
  return options;
}

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

constexpr const char* kHwCounters = "class/infiniband/mlx5_0/ports/1/hw_counters";
constexpr const char* kOutOfSequence =
    "class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence";

TEST(telemetry_collector, SecondSampleGivesDeltasOfEveryCounterReadTwice) {
  Rig rig;
  TelemetryCollector collector(rig.fs.root(), Nics(), &rig.ethtool);
  const TelemetrySample first = Read(collector, 0s);
  ASSERT_EQ(first.readings.size(), 2U);
  EXPECT_FALSE(first.deltas[0]);
  EXPECT_EQ(first.readings[0][NicCounter::kSymbolError], 100U);

  rig.fs.Write("class/infiniband/mlx5_0/ports/1/counters/symbol_error", "4310\n");
  rig.fs.Write("class/infiniband/mlx5_0/ports/1/counters/port_rcv_data", "1500\n");
  rig.fs.Write("class/net/eth2/carrier_changes", "4\n");
  rig.ethtool.stats["eth2"] = {{"rx_crc_errors_phy", 4030}, {"tx_prio3_pause", 10}};
  const TelemetrySample second = Read(collector, 10s);
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
  Read(collector, 0s);
  const TelemetrySample s = Read(collector, 10s);
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
  const TelemetrySample s = Read(collector, 0s);
  EXPECT_FALSE(s.readings[0][NicCounter::kRxFcsErrors]);
  EXPECT_EQ(s.readings[0][NicCounter::kCarrierChanges], 2U);
  // Without an RDMA device the netdev's PCI function is read.
  EXPECT_TRUE(s.readings[0].pcie);
  EXPECT_EQ(s.readings[0].total_failures(), 0U);
}

TEST(telemetry_collector, AFailedCounterIsCountedAndNotReadAgainUntilItsBackoffExpires) {
  Rig rig;
  rig.fs.MakeUnreadable(kOutOfSequence);
  TelemetryCollector collector(rig.fs.root(), Nics(), &rig.ethtool, Options());
  OpenCounter opens(rig.fs, kHwCounters);
  // Fails at 0 s (back-off 10 s, the period) and at 10 s (back-off 20 s).
  for (const auto t : {0s, 10s}) {
    const TelemetrySample s = Read(collector, t);
    EXPECT_FALSE(s.readings[0][NicCounter::kOutOfSequence]);
    EXPECT_EQ(s.readings[0][NicCounter::kPacketSeqErr], 0U);  // its neighbours are read
  }
  EXPECT_EQ(opens.Take()["out_of_sequence"], 2);
  EXPECT_EQ(Failures(collector, Source::kRdma), 2U);
  EXPECT_EQ(collector.stats().backed_off, 1U);

  // Readable again, but not read before 30 s.
  rig.fs.Remove(kOutOfSequence);
  rig.fs.Write(kOutOfSequence, "7\n");
  opens.Take();
  TelemetrySample s = Read(collector, 20s);
  EXPECT_FALSE(s.readings[0][NicCounter::kOutOfSequence]);
  EXPECT_EQ(opens.Take().count("out_of_sequence"), 0U);
  EXPECT_EQ(collector.stats().skipped_reads, 1U);
  EXPECT_EQ(Failures(collector, Source::kRdma), 2U);

  s = Read(collector, 30s);
  EXPECT_EQ(s.readings[0][NicCounter::kOutOfSequence], 7U);
  EXPECT_EQ(opens.Take()["out_of_sequence"], 1);
  EXPECT_EQ(collector.stats().backed_off, 0U);
  // A good read forgets the back-off: read again a period later.
  Read(collector, 40s);
  EXPECT_EQ(opens.Take()["out_of_sequence"], 1);
}

TEST(telemetry_collector, TheBackoffDoublesFromThePeriodAndCaps) {
  Rig rig;
  rig.fs.MakeUnreadable(kOutOfSequence);
  CollectorOptions options = Options();
  options.max_backoff = 40s;
  TelemetryCollector collector(rig.fs.root(), Nics(), &rig.ethtool, options);
  OpenCounter opens(rig.fs, kHwCounters);
  std::vector<std::int64_t> read_at;
  for (std::int64_t t = 0; t <= 200; t += 10) {
    Read(collector, std::chrono::seconds{t});
    if (opens.Take().count("out_of_sequence") != 0) read_at.push_back(t);
  }
  // Back-offs of 10, 20, 40 s, then 40 s again and again.
  EXPECT_EQ(read_at, (std::vector<std::int64_t>{0, 10, 30, 70, 110, 150, 190}));
  EXPECT_EQ(Failures(collector, Source::kRdma), 7U);
  EXPECT_EQ(collector.stats().skipped_reads, 21U - 7U);
}

TEST(telemetry_collector, AMissingDeviceAndAFailingEthtoolAreBackedOffWhole) {
  Rig rig;
  rig.ethtool.stats.erase("eth0");
  std::vector<TelemetryNic> nics = Nics();
  nics.push_back({"nic2", "eth7", "mlx5_7", 1});  // configured, not present yet
  TelemetryCollector collector(rig.fs.root(), nics, &rig.ethtool, Options());
  Read(collector, 0s);
  Read(collector, 10s);
  EXPECT_EQ(Failures(collector, Source::kRdma), 2U);
  EXPECT_EQ(Failures(collector, Source::kNetdev), 2U);
  EXPECT_EQ(Failures(collector, Source::kEthtool), 4U);  // eth0 and eth7, twice

  // mlx5_7 and eth7 appear; eth0 keeps failing: nothing of them is tried before 30 s.
  Mlx5Port port;
  port.counters = {{"symbol_error", 5}};
  AddMlx5(rig.fs, "mlx5_7", "eth7", "0000:3d:00.0", port);
  rig.ethtool.stats["eth7"] = {{"rx_crc_errors_phy", 1}};
  TelemetrySample s = Read(collector, 20s);
  EXPECT_FALSE(s.readings[2][NicCounter::kSymbolError]);
  EXPECT_FALSE(s.readings[2][NicCounter::kCarrierChanges]);
  EXPECT_EQ(s.readings[2].total_failures(), 0U);
  EXPECT_EQ(rig.ethtool.reads["eth0"], 2);
  EXPECT_EQ(rig.ethtool.reads["eth7"], 2);
  EXPECT_EQ(rig.ethtool.reads["eth2"], 3);
  EXPECT_EQ(collector.stats().backed_off, 4U);  // mlx5_7, eth7, both ethtools

  s = Read(collector, 30s);
  EXPECT_EQ(s.readings[2][NicCounter::kSymbolError], 5U);
  EXPECT_EQ(s.readings[2][NicCounter::kCarrierChanges], 2U);
  EXPECT_EQ(s.readings[2][NicCounter::kRxFcsErrors], 1U);
  EXPECT_EQ(rig.ethtool.reads["eth0"], 3);
  EXPECT_EQ(collector.stats().backed_off, 1U);  // eth0's ethtool, now for 40 s
}

TEST(telemetry_collector, ExcludedDevicesAndCountersAreNeverOpened) {
  Rig rig;
  // Each of these would fail if it were read.
  rig.fs.MakeUnreadable(kOutOfSequence);
  rig.fs.MakeUnreadable("class/infiniband/mlx5_0/ports/1/counters/symbol_error");
  rig.fs.MakeUnreadable("class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts");
  TelemetryCollector collector(
      rig.fs.root(), Nics(), &rig.ethtool,
      Options(Rules({"mlx5_0:hw_counters/out_of_sequence", "counters/symbol_error", "rxe0",
                     "eth2:ethtool/rx_crc_errors_phy", "eth0:ethtool"})));
  OpenCounter hw_counters(rig.fs, kHwCounters);
  OpenCounter counters(rig.fs, "class/infiniband/mlx5_0/ports/1/counters");
  OpenCounter rxe(rig.fs, "class/infiniband/rxe0/ports/1/hw_counters");
  OpenCounter rxe_port(rig.fs, "class/infiniband/rxe0/ports/1");
  const TelemetrySample s = Read(collector, 0s);

  std::map<std::string, int> opened = hw_counters.Take();
  EXPECT_EQ(opened.count("out_of_sequence"), 0U);
  EXPECT_EQ(opened["packet_seq_err"], 1);
  opened = counters.Take();
  EXPECT_EQ(opened.count("symbol_error"), 0U);
  EXPECT_EQ(opened["port_rcv_data"], 1);
  EXPECT_TRUE(rxe.Take().empty());
  EXPECT_TRUE(rxe_port.Take().empty());
  EXPECT_EQ(rig.ethtool.reads.count("eth0"), 0U);
  EXPECT_EQ(rig.ethtool.reads["eth2"], 1);

  const NicReading& mlx5 = s.readings[0];
  EXPECT_FALSE(mlx5[NicCounter::kOutOfSequence]);
  EXPECT_FALSE(mlx5[NicCounter::kSymbolError]);
  EXPECT_EQ(mlx5[NicCounter::kPortRcvDataBytes], 4000U);
  EXPECT_FALSE(mlx5[NicCounter::kRxFcsErrors]);  // fetched by the ioctl, dropped
  EXPECT_EQ(mlx5.tx_pfc_pause[3], 10U);
  EXPECT_TRUE(mlx5.pcie);
  // rxe0 is excluded, its netdev (and the NIC's probes) are not.
  const NicReading& rxe0 = s.readings[1];
  EXPECT_EQ(rxe0.port_state, 0U);
  EXPECT_FALSE(rxe0[NicCounter::kLinkDowned]);
  EXPECT_EQ(rxe0[NicCounter::kCarrierChanges], 1U);
  EXPECT_EQ(rxe0.carrier, Carrier::kUp);
  EXPECT_EQ(collector.stats().failures, (std::array<std::uint64_t, kSourceCount>{}));
  EXPECT_EQ(collector.stats().backed_off, 0U);
}

TEST(telemetry_collector, ThePciFunctionIsReadThroughTheNetdevOfAnExcludedRdmaDevice) {
  Rig rig;
  TelemetryCollector through_netdev(rig.fs.root(), Nics(), &rig.ethtool,
                                    Options(Rules({"mlx5_0"})));
  const TelemetrySample s = Read(through_netdev, 0s);
  EXPECT_TRUE(s.readings[0].pcie);
  EXPECT_EQ(s.readings[0][NicCounter::kAerCorrectable], 0U);
  EXPECT_EQ(s.readings[0].port_state, 0U);

  TelemetryCollector no_pcie(rig.fs.root(), Nics(), &rig.ethtool, Options(Rules({"mlx5_0:pcie"})));
  OpenCounter opens(rig.fs, "devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0");
  const TelemetrySample t = Read(no_pcie, 0s);
  EXPECT_TRUE(opens.Take().empty());
  EXPECT_FALSE(t.readings[0].pcie);
  EXPECT_FALSE(t.readings[0][NicCounter::kAerCorrectable]);
  EXPECT_EQ(t.readings[0].port_state, 4U);
}

TEST(telemetry_collector, NothingIsReadAgainWithinAPeriodWhoeverCalls) {
  Rig rig;
  TelemetryCollector collector(rig.fs.root(), Nics(), &rig.ethtool, Options());
  OpenCounter opens(rig.fs, "class/net/eth2");
  Read(collector, 0s);
  EXPECT_EQ(opens.Take()["operstate"], 1);
  // A second caller at once, and an early one: refused, nothing opened.
  for (const auto t : std::vector<std::chrono::nanoseconds>{0s, 9999ms}) {
    EXPECT_FALSE(collector.Sample(MonoTime{} + t, kT0 + t.count()));
  }
  EXPECT_TRUE(opens.Take().empty());
  EXPECT_EQ(rig.ethtool.reads["eth2"], 1);
  EXPECT_EQ(collector.stats().samples, 1U);
  const TelemetrySample s = Read(collector, 10s);
  ASSERT_TRUE(s.deltas[0]);
  EXPECT_EQ(s.deltas[0]->end_ns - s.deltas[0]->start_ns, kPeriod);
  EXPECT_EQ(opens.Take()["operstate"], 1);
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
