// Driver statistic names -> the counters the agent keeps (mlx5, bnxt_en,
// generic), per PFC priority included.
#include <gtest/gtest.h>

#include <vector>

#include "agent/telemetry/ethtool_stats.h"

namespace hostmesh::agent::telemetry {
namespace {

TEST(ethtool_map, Mlx5Names) {
  const std::vector<EthtoolStat> stats = {{"rx_packets", 1000},
                                          {"rx_out_of_buffer", 7},
                                          {"rx_discards_phy", 8},
                                          {"link_down_events_phy", 2},
                                          {"rx_pcs_symbol_err_phy", 4210},
                                          {"rx_crc_errors_phy", 3980},
                                          {"rx_symbol_err_phy", 1},
                                          {"rx_pause_ctrl_phy", 5},
                                          {"tx_pause_ctrl_phy", 6},
                                          {"rx_prio3_pause", 30},
                                          {"tx_prio3_pause", 31},
                                          {"rx_prio3_pause_duration", 99999},
                                          {"rx_prio3_pause_transition", 77},
                                          {"tx_prio0_pause", 1},
                                          {"rx_prio7_pause", 70},
                                          {"rx3_packets", 5}};
  NicReading r;
  MapEthtoolStats(stats, r);
  EXPECT_EQ(r[NicCounter::kRxOutOfBuffer], 7U);
  EXPECT_EQ(r[NicCounter::kRxDiscardsPhy], 8U);
  EXPECT_EQ(r[NicCounter::kLinkDownEvents], 2U);
  EXPECT_EQ(r[NicCounter::kRxSymbolErrors], 4210U);
  EXPECT_EQ(r[NicCounter::kRxFcsErrors], 3980U);
  EXPECT_EQ(r[NicCounter::kRxPause], 5U);
  EXPECT_EQ(r[NicCounter::kTxPause], 6U);
  EXPECT_EQ(r.rx_pfc_pause[3], 30U);  // not _duration or _transition
  EXPECT_EQ(r.tx_pfc_pause[3], 31U);
  EXPECT_EQ(r.tx_pfc_pause[0], 1U);
  EXPECT_EQ(r.rx_pfc_pause[7], 70U);
  EXPECT_FALSE(r.rx_pfc_pause[0]);
  // Sysfs-only counters are not set from ethtool.
  EXPECT_FALSE(r[NicCounter::kCarrierChanges]);
}

TEST(ethtool_map, BnxtAndGenericNames) {
  NicReading bnxt;
  MapEthtoolStats(std::vector<EthtoolStat>{{"rx_fcs_err_frames", 9},
                                           {"rx_pcs_symbol_err", 10},
                                           {"rx_pause_frames", 11},
                                           {"tx_pfc_ena_frames_pri3", 12},
                                           {"rx_pfc_ena_frames_pri5", 13}},
                  bnxt);
  EXPECT_EQ(bnxt[NicCounter::kRxFcsErrors], 9U);
  EXPECT_EQ(bnxt[NicCounter::kRxSymbolErrors], 10U);
  EXPECT_EQ(bnxt[NicCounter::kRxPause], 11U);
  EXPECT_EQ(bnxt.tx_pfc_pause[3], 12U);
  EXPECT_EQ(bnxt.rx_pfc_pause[5], 13U);

  NicReading generic;
  MapEthtoolStats(std::vector<EthtoolStat>{{"rx_crc_errors", 4}}, generic);
  EXPECT_EQ(generic[NicCounter::kRxFcsErrors], 4U);
}

TEST(ethtool_map, ThePreferredSpellingWinsWhenADriverHasTwo) {
  NicReading r;
  MapEthtoolStats(std::vector<EthtoolStat>{{"rx_crc_errors", 1}, {"rx_crc_errors_phy", 2}}, r);
  EXPECT_EQ(r[NicCounter::kRxFcsErrors], 2U);
}

TEST(ethtool_map, VethStatsMapToNothing) {
  // What `ethtool -S` shows for a veth: no counter of ours.
  NicReading r;
  MapEthtoolStats(std::vector<EthtoolStat>{{"peer_ifindex", 7},
                                           {"rx_queue_0_xdp_packets", 0},
                                           {"rx_queue_0_drops", 0},
                                           {"tx_queue_0_xdp_xmit", 0}},
                  r);
  for (const auto& c : r.counters) EXPECT_FALSE(c);
  for (const auto& c : r.rx_pfc_pause) EXPECT_FALSE(c);
  EXPECT_FALSE(r.rx_pfc_pause[0]);
  EXPECT_FALSE(r.tx_pfc_pause[0]);
}

TEST(ethtool_map, PriorityNamesAreExact) {
  NicReading r;
  MapEthtoolStats(std::vector<EthtoolStat>{{"rx_prio8_pause", 1},
                                           {"rx_prio33_pause", 2},
                                           {"rx_prioX_pause", 3},
                                           {"rx_prio_pause", 4}},
                  r);
  for (const auto& c : r.rx_pfc_pause) EXPECT_FALSE(c);
}

}  // namespace
}  // namespace hostmesh::agent::telemetry
