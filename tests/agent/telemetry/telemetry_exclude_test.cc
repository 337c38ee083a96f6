// telemetry.exclude entries: every documented form, what is wrong with bad
// ones, and which values a list holds back.
#include "agent/telemetry/telemetry_exclude.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hostmesh::agent::telemetry {
namespace {

using ::testing::HasSubstr;

ExcludeRule Parse(std::string_view text) {
  std::string why;
  const std::optional<ExcludeRule> rule = ParseExcludeRule(text, &why);
  EXPECT_TRUE(rule) << text << ": " << why;
  return rule.value_or(ExcludeRule{});
}

std::string Why(std::string_view text) {
  std::string why;
  EXPECT_FALSE(ParseExcludeRule(text, &why)) << text;
  return why;
}

TEST(telemetry_exclude, EveryDocumentedFormParsesAndPrintsBack) {
  using W = ExcludeWhat;
  const std::pair<const char*, ExcludeRule> cases[] = {
      {"mlx5_0", {W::kDevice, "mlx5_0", ""}},
      {"eth2", {W::kDevice, "eth2", ""}},
      {"hw_counters/out_of_sequence", {W::kPortCounter, "", "hw_counters/out_of_sequence"}},
      {"mlx5_0:hw_counters/out_of_sequence",
       {W::kPortCounter, "mlx5_0", "hw_counters/out_of_sequence"}},
      {"counters/port_xmit_wait", {W::kPortCounter, "", "counters/port_xmit_wait"}},
      {"ethtool/rx_discards_phy", {W::kEthtoolStat, "", "rx_discards_phy"}},
      {"eth2:ethtool/rx_prio3_pause", {W::kEthtoolStat, "eth2", "rx_prio3_pause"}},
      {"ethtool/tx_queue_0:xdp", {W::kEthtoolStat, "", "tx_queue_0:xdp"}},  // ':' in a name
      {"eth2:ethtool", {W::kEthtool, "eth2", ""}},
      {"ethtool", {W::kEthtool, "", ""}},
      {"mlx5_1:pcie", {W::kPcie, "mlx5_1", ""}},
      {"pcie", {W::kPcie, "", ""}},
  };
  for (const auto& [text, rule] : cases) {
    EXPECT_EQ(Parse(text), rule) << text;
    EXPECT_EQ(ToString(rule), text);
  }
}

TEST(telemetry_exclude, BadEntriesSayWhatIsWrong) {
  EXPECT_EQ(Why("mlx5_0:"),
            "nothing after the device's ':': expected counters/NAME, hw_counters/NAME, "
            "ethtool/NAME, ethtool or pcie");
  EXPECT_EQ(Why(":hw_counters/x"), "the device name is empty");
  EXPECT_THAT(Why("mlx5_0:state"), HasSubstr("after the device's ':'"));
  EXPECT_EQ(Why("sys/class/net"),
            "unknown source before '/': expected counters/, hw_counters/ or ethtool/");
  EXPECT_EQ(Why("mlx5_0:pcie/aer_dev_fatal"),
            "unknown source before '/': expected counters/, hw_counters/ or ethtool/");
  EXPECT_EQ(Why("hw_counters/"), "the counter file name is empty");
  EXPECT_THAT(Why("hw_counters/a/b"), HasSubstr("may hold no space, '/'"));
  EXPECT_THAT(Why("counters/x y"), HasSubstr("may hold no space"));
  EXPECT_THAT(Why("mlx5 0"), HasSubstr("the device name may hold no space"));
  EXPECT_THAT(Why("m\xc3\xa9x:ethtool"), HasSubstr("non-ASCII"));
  EXPECT_EQ(Why(std::string(64, 'd')), "the device name is longer than 63 characters");
  EXPECT_EQ(Why("ethtool/" + std::string(32, 's')),
            "the ethtool statistic name is longer than 31 characters");
}

TEST(telemetry_exclude, AListHoldsBackWhatItNamesAndNothingElse) {
  const TelemetryExclude exclude(
      {Parse("mlx5_1"), Parse("hw_counters/out_of_sequence"), Parse("mlx5_0:counters/symbol_error"),
       Parse("ethtool/rx_discards_phy"), Parse("eth3:ethtool"), Parse("eth4:pcie")});
  EXPECT_TRUE(exclude.Device("mlx5_1"));
  EXPECT_FALSE(exclude.Device("mlx5_0"));
  EXPECT_FALSE(exclude.Device(""));
  EXPECT_TRUE(exclude.PortFile("mlx5_0", "hw_counters/out_of_sequence"));
  EXPECT_TRUE(exclude.PortFile("mlx5_2", "hw_counters/out_of_sequence"));
  EXPECT_TRUE(exclude.PortFile("mlx5_0", "counters/symbol_error"));
  EXPECT_FALSE(exclude.PortFile("mlx5_2", "counters/symbol_error"));
  EXPECT_TRUE(exclude.PortFile("mlx5_1", "counters/link_downed"));  // the whole device
  EXPECT_FALSE(exclude.PortFile("mlx5_0", "hw_counters/out_of_seq_request"));
  EXPECT_TRUE(exclude.EthtoolStat("eth2", "rx_discards_phy"));
  EXPECT_FALSE(exclude.EthtoolStat("eth2", "rx_out_of_buffer"));
  EXPECT_TRUE(exclude.Ethtool("eth3"));
  EXPECT_FALSE(exclude.Ethtool("eth2"));
  EXPECT_TRUE(exclude.Pcie("mlx5_4", "eth4"));
  EXPECT_TRUE(exclude.Pcie("", "eth4"));
  EXPECT_FALSE(exclude.Pcie("mlx5_0", "eth2"));
  EXPECT_FALSE(exclude.Pcie("", ""));

  const TelemetryExclude device_ethtool({Parse("eth5")});
  EXPECT_TRUE(device_ethtool.Ethtool("eth5"));  // an excluded netdev has no ethtool either
  EXPECT_TRUE(TelemetryExclude({Parse("pcie")}).Pcie("mlx5_0", ""));
  EXPECT_TRUE(TelemetryExclude().empty());
}

}  // namespace
}  // namespace hostmesh::agent::telemetry
