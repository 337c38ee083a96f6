// Per-NIC totals of NIC telemetry and their roll-up by agent and NIC name.
#include <gtest/gtest.h>

#include "analyzer/telemetry/nic_counter_totals.h"
#include "analyzer/telemetry/telemetry_rollup.h"
#include "tests/analyzer/telemetry/telemetry_sample.h"

namespace hostmesh::analyzer::telemetry {
namespace {

using testing::Sample;

constexpr std::int64_t kS = 1'000'000'000;

TEST(nic_counter_totals, SumsDeltasAndKeepsTheLatestState) {
  NicCounterTotals t;
  EXPECT_FALSE(t.Get(v1::NIC_COUNTER_SYMBOL_ERROR));
  EXPECT_FALSE(t.PauseFrames(false));

  v1::NicTelemetry later = Sample(1, 10 * kS, 20 * kS,
                                  {{v1::NIC_COUNTER_SYMBOL_ERROR, 4000},
                                   {v1::NIC_COUNTER_TX_PAUSE, 300, 3},
                                   {v1::NIC_COUNTER_TX_PAUSE, 7}});
  later.set_port_state(1);
  later.set_carrier(v1::CARRIER_DOWN);
  later.mutable_pcie()->set_current_width(8);
  later.mutable_pcie()->set_max_width(16);
  later.set_read_failures(2);
  v1::NicTelemetry earlier = Sample(1, 0, 10 * kS,
                                    {{v1::NIC_COUNTER_SYMBOL_ERROR, 210},
                                     {v1::NIC_COUNTER_LINK_DOWNED, 0},
                                     {v1::NIC_COUNTER_TX_PAUSE, 200, 3},
                                     {v1::NIC_COUNTER_RX_PAUSE, 5, 9}});  // no priority 9
  t.Add(later);
  t.Add(earlier);  // out of order: the state stays the later one's

  EXPECT_EQ(t.samples, 2U);
  EXPECT_EQ(t.start_ns, 0);
  EXPECT_EQ(t.end_ns, 20 * kS);
  EXPECT_EQ(t.Get(v1::NIC_COUNTER_SYMBOL_ERROR), 4210U);
  EXPECT_EQ(t.Get(v1::NIC_COUNTER_LINK_DOWNED), 0U);   // read, did not move
  EXPECT_FALSE(t.Get(v1::NIC_COUNTER_RX_FCS_ERRORS));  // never read
  EXPECT_EQ(t.tx_pfc_pause[3], 500U);
  EXPECT_EQ(t.Get(v1::NIC_COUNTER_TX_PAUSE), 7U);  // link-level
  EXPECT_EQ(t.PauseFrames(false), 507U);
  EXPECT_FALSE(t.PauseFrames(true));
  EXPECT_EQ(t.port_state, 1U);
  EXPECT_EQ(t.carrier, v1::CARRIER_DOWN);
  ASSERT_TRUE(t.pcie);
  EXPECT_TRUE(t.pcie->Downgraded());
  EXPECT_EQ(t.read_failures, 2U);
}

TEST(nic_counter_totals, PcieDowngradeNeedsKnownFigures) {
  EXPECT_FALSE((PcieLinkState{16, 16, 16000, 16000}.Downgraded()));
  EXPECT_TRUE((PcieLinkState{16, 16, 8000, 16000}.Downgraded()));
  EXPECT_FALSE((PcieLinkState{0, 16, 0, 16000}.Downgraded()));  // unknown is not narrow
}

TEST(nic_counter_totals, CounterNamesAreTheWireNamesInLowerCase) {
  EXPECT_EQ(CounterName(v1::NIC_COUNTER_SYMBOL_ERROR), "symbol_error");
  EXPECT_EQ(CounterName(v1::NIC_COUNTER_PORT_RCV_DATA_BYTES), "port_rcv_data_bytes");
  EXPECT_EQ(CounterName(v1::NIC_COUNTER_PCIE_AER_FATAL), "pcie_aer_fatal");
  EXPECT_EQ(CounterName(static_cast<v1::NicCounter>(999)), "counter_999");  // a newer agent's
}

TEST(telemetry_rollup, OneRowPerAgentAndNicNameAcrossBoots) {
  // Boot 1 numbered the NICs one way, boot 2 the other.
  const auto namer = [](std::string_view agent, std::uint64_t boot,
                        std::uint32_t nic) -> std::optional<std::string> {
    if (agent != "h1") return std::nullopt;
    if (boot == 1) return nic == 0 ? "nicA" : "nicB";
    return nic == 0 ? "nicB" : "nicA";
  };
  TelemetryRollup all({}, namer);
  all.Add("h1", 1, Sample(0, 0, 10 * kS, {{v1::NIC_COUNTER_SYMBOL_ERROR, 1}}));
  all.Add("h1", 2, Sample(1, 10 * kS, 20 * kS, {{v1::NIC_COUNTER_SYMBOL_ERROR, 2}}));
  all.Add("h1", 2, Sample(0, 10 * kS, 20 * kS, {{v1::NIC_COUNTER_SYMBOL_ERROR, 40}}));
  all.Add("h2", 5, Sample(3, 0, 10 * kS, {{v1::NIC_COUNTER_SYMBOL_ERROR, 9}}));
  const std::vector<NicTelemetryRow> rows = all.Rows();
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[0].agent_id, "h1");
  EXPECT_EQ(rows[0].nic, "nicA");
  EXPECT_EQ(rows[0].totals.Get(v1::NIC_COUNTER_SYMBOL_ERROR), 3U);
  EXPECT_EQ(rows[0].totals.samples, 2U);
  EXPECT_EQ(rows[1].nic, "nicB");
  EXPECT_EQ(rows[1].totals.Get(v1::NIC_COUNTER_SYMBOL_ERROR), 40U);
  EXPECT_EQ(rows[2].agent_id, "h2");
  EXPECT_EQ(rows[2].nic, "nic3");  // no Hello known: named by id

  TelemetryRollup one({"h1", "nicB"}, namer);
  one.Add("h1", 1, Sample(1, 0, 10 * kS, {{v1::NIC_COUNTER_SYMBOL_ERROR, 1}}));
  one.Add("h1", 1, Sample(0, 0, 10 * kS, {{v1::NIC_COUNTER_SYMBOL_ERROR, 1}}));
  one.Add("h2", 1, Sample(1, 0, 10 * kS, {{v1::NIC_COUNTER_SYMBOL_ERROR, 1}}));
  ASSERT_EQ(one.Rows().size(), 1U);
  EXPECT_EQ(one.Rows()[0].nic, "nicB");
}

}  // namespace
}  // namespace hostmesh::analyzer::telemetry
