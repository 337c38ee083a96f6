// The sysfs readers on fake mlx5 and rxe trees: the right file for each
// counter, words converted to bytes, state gauges, PCIe and AER, and what
// happens when files are missing or unreadable.
#include "agent/telemetry/sysfs_readers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tests/agent/telemetry/fake_sysfs.h"

namespace hostmesh::agent::telemetry {
namespace {

using testing::AddMlx5;
using testing::AddRxe;
using testing::FakeSysfs;
using testing::Mlx5Port;
using testing::SetPcie;

std::uint32_t Failures(const NicReading& r, Source s) {
  return r.failures[static_cast<std::size_t>(s)];
}

TEST(sysfs_readers, Mlx5PortCountersComeFromTheirFilesAndDataIsInBytes) {
  FakeSysfs fs;
  Mlx5Port port;
  port.counters = {{"link_downed", 3},        {"symbol_error", 4210},  {"port_rcv_errors", 17},
                   {"port_xmit_discards", 5}, {"port_rcv_data", 1000}, {"port_xmit_data", 250},
                   {"port_rcv_packets", 999}};
  port.hw_counters = {{"out_of_sequence", 11},       {"packet_seq_err", 12},
                      {"local_ack_timeout_err", 13}, {"np_cnp_sent", 14},
                      {"rp_cnp_handled", 15},        {"rnr_nak_retry_err", 16},
                      {"out_of_buffer", 777}};
  AddMlx5(fs, "mlx5_0", "eth2", "0000:3b:00.0", port);
  NicReading r;
  ReadRdmaPort(SysfsTree(fs.root()), "mlx5_0", 1, r);

  EXPECT_EQ(r[NicCounter::kLinkDowned], 3U);
  EXPECT_EQ(r[NicCounter::kSymbolError], 4210U);
  EXPECT_EQ(r[NicCounter::kPortRcvErrors], 17U);
  EXPECT_EQ(r[NicCounter::kPortXmitDiscards], 5U);
  EXPECT_EQ(r[NicCounter::kPortRcvDataBytes], 4000U);  // 4-byte words
  EXPECT_EQ(r[NicCounter::kPortXmitDataBytes], 1000U);
  EXPECT_EQ(r[NicCounter::kOutOfSequence], 11U);
  EXPECT_EQ(r[NicCounter::kPacketSeqErr], 12U);
  EXPECT_EQ(r[NicCounter::kLocalAckTimeoutErr], 13U);
  EXPECT_EQ(r[NicCounter::kNpCnpSent], 14U);
  EXPECT_EQ(r[NicCounter::kRpCnpHandled], 15U);
  EXPECT_EQ(r[NicCounter::kRnrNakRetryErr], 16U);
  EXPECT_EQ(r[NicCounter::kPortRcvPackets], 999U);  // counters/ before hw_counters/
  EXPECT_EQ(r.port_state, 4U);
  EXPECT_EQ(r.phys_state, 5U);
  EXPECT_EQ(r.total_failures(), 0U);
  // Ethernet counters are not the RDMA reader's business.
  EXPECT_FALSE(r[NicCounter::kRxOutOfBuffer]);
}

TEST(sysfs_readers, RxeUsesItsOwnCounterNamesAndLacksThePmaOnes) {
  FakeSysfs fs;
  AddRxe(fs, "rxe0", "eth0",
         {{"link_downed", 2},
          {"out_of_seq_request", 7},
          {"rcvd_seq_err", 8},
          {"retry_rnr_exceeded_err", 9},
          {"rcvd_pkts", 12345}});
  NicReading r;
  ReadRdmaPort(SysfsTree(fs.root()), "rxe0", 1, r);
  EXPECT_EQ(r[NicCounter::kLinkDowned], 2U);
  EXPECT_EQ(r[NicCounter::kOutOfSequence], 7U);
  EXPECT_EQ(r[NicCounter::kPacketSeqErr], 8U);
  EXPECT_EQ(r[NicCounter::kRnrNakRetryErr], 9U);
  EXPECT_EQ(r[NicCounter::kPortRcvPackets], 12345U);
  EXPECT_EQ(r[NicCounter::kPortXmitPackets], 0U);  // sent_pkts is there, at 0
  // rxe has no IB PMA counters/: not available, and not a failure.
  EXPECT_FALSE(r[NicCounter::kSymbolError]);
  EXPECT_FALSE(r[NicCounter::kPortRcvDataBytes]);
  EXPECT_FALSE(r[NicCounter::kNpCnpSent]);
  EXPECT_EQ(r.total_failures(), 0U);
  EXPECT_EQ(r.port_state, 4U);
}

TEST(sysfs_readers, ADownPortKeepsItsStateNumbers) {
  FakeSysfs fs;
  Mlx5Port port;
  port.state = "1: DOWN";
  port.phys_state = "3: Disabled";
  AddMlx5(fs, "mlx5_1", "eth3", "0000:3c:00.0", port);
  fs.Write("class/net/eth3/operstate", "down\n");
  NicReading r;
  const SysfsTree sysfs(fs.root());
  ReadRdmaPort(sysfs, "mlx5_1", 1, r);
  ReadNetdev(sysfs, "eth3", r);
  EXPECT_EQ(r.port_state, 1U);
  EXPECT_EQ(r.phys_state, 3U);
  EXPECT_EQ(r.carrier, Carrier::kDown);
  EXPECT_EQ(r[NicCounter::kCarrierChanges], 2U);
}

TEST(sysfs_readers, AMissingDeviceOrGarbledFileCountsAFailureAndReadsTheRest) {
  FakeSysfs fs;
  Mlx5Port port;
  port.counters = {{"symbol_error", 9}};
  AddMlx5(fs, "mlx5_0", "eth2", "0000:3b:00.0", port);
  fs.Write("class/infiniband/mlx5_0/ports/1/counters/link_downed", "N/A\n");
  // A directory where a file should be: open works, read fails (EISDIR).
  fs.Remove("class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors");
  fs.Write("class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors/x", "");
  const SysfsTree sysfs(fs.root());

  NicReading r;
  ReadRdmaPort(sysfs, "mlx5_0", 1, r);
  EXPECT_EQ(Failures(r, Source::kRdma), 2U);
  EXPECT_FALSE(r[NicCounter::kLinkDowned]);
  EXPECT_FALSE(r[NicCounter::kPortRcvErrors]);
  EXPECT_EQ(r[NicCounter::kSymbolError], 9U);

  NicReading gone;
  ReadRdmaPort(sysfs, "mlx5_9", 1, gone);
  ReadRdmaPort(sysfs, "mlx5_0", 2, gone);  // a port the device does not have
  ReadNetdev(sysfs, "eth9", gone);
  EXPECT_EQ(Failures(gone, Source::kRdma), 2U);
  EXPECT_EQ(Failures(gone, Source::kNetdev), 1U);
  EXPECT_EQ(gone.port_state, 0U);
  EXPECT_EQ(gone.carrier, Carrier::kUnknown);
}

// Holds back the items it is told, records what the readers report.
class RecordingGate final : public ReadGate {
 public:
  bool MayRead(Source source, std::string_view item) override {
    asked.push_back(std::string(SourceName(source)) + ":" + std::string(item));
    return held.count(std::string(item)) == 0;
  }
  void Done(Source source, std::string_view item, std::string_view error) override {
    if (!error.empty()) {
      failed.push_back(std::string(SourceName(source)) + ":" + std::string(item) + ": " +
                       std::string(error));
    }
  }
  std::set<std::string> held;
  std::vector<std::string> asked;
  std::vector<std::string> failed;
};

TEST(sysfs_readers, AGateHoldsValuesBackAndHearsWhyReadsFailed) {
  FakeSysfs fs;
  AddRxe(fs, "rxe0", "eth0", {{"link_downed", 2}, {"rcvd_pkts", 12}});
  fs.MakeUnreadable("class/infiniband/rxe0/ports/1/hw_counters/sent_pkts");
  fs.Write("class/infiniband/rxe0/ports/1/state", "ACTIVE\n");
  RecordingGate gate;
  // rxe has no counters/link_downed: held back, its hw_counters/ twin is not read either.
  gate.held = {"counters/link_downed", "hw_counters/rcvd_pkts"};
  NicReading r;
  ReadRdmaPort(SysfsTree(fs.root()), "rxe0", 1, r, gate);
  EXPECT_FALSE(r[NicCounter::kLinkDowned]);
  EXPECT_FALSE(r[NicCounter::kPortRcvPackets]);
  EXPECT_EQ(std::count(gate.asked.begin(), gate.asked.end(), "rdma:hw_counters/link_downed"), 0);
  EXPECT_EQ(gate.asked.front(), "rdma:");  // the device before its files
  EXPECT_EQ(gate.failed, (std::vector<std::string>{
                             "rdma:hw_counters/sent_pkts: Is a directory",
                             "rdma:state: no leading number",
                         }));
  EXPECT_EQ(Failures(r, Source::kRdma), 2U);

  // A device held back is not looked at: no failure although it is missing.
  RecordingGate whole;
  whole.held = {""};
  NicReading gone;
  ReadRdmaPort(SysfsTree(fs.root()), "mlx5_9", 1, gone, whole);
  ReadNetdev(SysfsTree(fs.root()), "eth9", gone, whole);
  EXPECT_EQ(whole.asked, (std::vector<std::string>{"rdma:", "netdev:"}));
  EXPECT_EQ(gone.total_failures(), 0U);
}

TEST(sysfs_readers, PcieLinkAndAerThroughTheDeviceSymlink) {
  FakeSysfs fs;
  AddMlx5(fs, "mlx5_0", "eth2", "0000:3b:00.0", {});
  SetPcie(fs, "0000:3b:00.0", "8", "8.0 GT/s PCIe", 42);
  NicReading r;
  ReadPcie(SysfsTree(fs.root()), "class/infiniband/mlx5_0/device", r);
  ASSERT_TRUE(r.pcie);
  EXPECT_EQ(r.pcie->current_width, 8U);
  EXPECT_EQ(r.pcie->max_width, 16U);
  EXPECT_EQ(r.pcie->current_speed_mts, 8000U);
  EXPECT_EQ(r.pcie->max_speed_mts, 16000U);
  EXPECT_TRUE(r.pcie->Downgraded());
  EXPECT_EQ(r[NicCounter::kAerCorrectable], 42U);
  EXPECT_EQ(r[NicCounter::kAerNonfatal], 0U);
  EXPECT_EQ(r[NicCounter::kAerFatal], 0U);
  EXPECT_EQ(r.total_failures(), 0U);
}

TEST(sysfs_readers, NoPciFunctionIsNotAFailure) {
  FakeSysfs fs;
  AddRxe(fs, "rxe0", "eth0", {});
  NicReading r;
  const SysfsTree sysfs(fs.root());
  ReadPcie(sysfs, "class/infiniband/rxe0/device", r);
  ReadPcie(sysfs, "class/net/eth0/device", r);
  EXPECT_FALSE(r.pcie);
  EXPECT_FALSE(r[NicCounter::kAerCorrectable]);
  EXPECT_EQ(r.total_failures(), 0U);
}

TEST(sysfs_readers, AnUnparsablePcieSpeedFailsThePcieSource) {
  FakeSysfs fs;
  AddMlx5(fs, "mlx5_0", "eth2", "0000:3b:00.0", {});
  SetPcie(fs, "0000:3b:00.0", "16", "fast", 0);
  NicReading r;
  ReadPcie(SysfsTree(fs.root()), "class/net/eth2/device", r);
  EXPECT_FALSE(r.pcie);
  EXPECT_EQ(Failures(r, Source::kPcie), 1U);
  EXPECT_EQ(r[NicCounter::kAerCorrectable], 0U);  // AER read on regardless
}

TEST(sysfs_parsers, Numbers) {
  std::uint64_t v = 0;
  EXPECT_TRUE(ParseU64("18446744073709551615\n", &v));
  EXPECT_EQ(v, UINT64_MAX);
  EXPECT_FALSE(ParseU64("18446744073709551616", &v));
  EXPECT_FALSE(ParseU64("", &v));
  EXPECT_FALSE(ParseU64("12 packets", &v));
  EXPECT_FALSE(ParseU64("-1", &v));
  std::uint32_t s = 0;
  EXPECT_TRUE(ParseLeadingU32("4: ACTIVE\n", &s));
  EXPECT_EQ(s, 4U);
  EXPECT_FALSE(ParseLeadingU32("ACTIVE", &s));
}

TEST(sysfs_parsers, PcieSpeeds) {
  std::uint32_t mts = 1;
  EXPECT_TRUE(ParsePcieSpeedMts("2.5 GT/s PCIe\n", &mts));
  EXPECT_EQ(mts, 2500U);
  EXPECT_TRUE(ParsePcieSpeedMts("8 GT/s", &mts));  // older kernels
  EXPECT_EQ(mts, 8000U);
  EXPECT_TRUE(ParsePcieSpeedMts("32.0 GT/s PCIe", &mts));
  EXPECT_EQ(mts, 32000U);
  EXPECT_TRUE(ParsePcieSpeedMts("Unknown", &mts));
  EXPECT_EQ(mts, 0U);
  EXPECT_FALSE(ParsePcieSpeedMts("8.0 Gb/s", &mts));
  EXPECT_FALSE(ParsePcieSpeedMts("", &mts));
}

TEST(sysfs_parsers, AerTotals) {
  std::uint64_t total = 0;
  EXPECT_TRUE(ParseAerTotal("RxErr 3\nBadTLP 4\nTOTAL_ERR_COR 7\n", &total));
  EXPECT_EQ(total, 7U);
  // Kernels before the TOTAL_ line: the sum.
  EXPECT_TRUE(ParseAerTotal("RxErr 3\nBadTLP 4\n", &total));
  EXPECT_EQ(total, 7U);
  EXPECT_FALSE(ParseAerTotal("", &total));
  EXPECT_FALSE(ParseAerTotal("RxErr many\n", &total));
}

}  // namespace
}  // namespace hostmesh::agent::telemetry
