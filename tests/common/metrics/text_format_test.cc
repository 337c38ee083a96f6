// The exposition text, byte for byte.
#include "common/metrics/text_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/metrics/buckets.h"
#include "common/metrics/registry.h"

namespace hostmesh::metrics {
namespace {

TEST(MetricsTextFormat, CounterWithLabelsNeedingEscapes) {
  Registry r;
  Family<Counter>& f = r.AddCounterFamily("hm_drops_total", "Dropped probes.", {"src", "dst"});
  f.WithLabels({"nic0", "a\"b\\c\nd"}).Inc(3);
  f.WithLabels({"nic0", "nic1"}).Inc();
  EXPECT_EQ(RenderText(r.Collect()),
            "# HELP hm_drops_total Dropped probes.\n"
            "# TYPE hm_drops_total counter\n"
            "hm_drops_total{src=\"nic0\",dst=\"a\\\"b\\\\c\\nd\"} 3\n"
            "hm_drops_total{src=\"nic0\",dst=\"nic1\"} 1\n");
}

TEST(MetricsTextFormat, GaugeWithoutLabelsAndEscapedHelp) {
  Registry r;
  r.AddGauge("hm_spool_bytes", "Bytes \"spooled\"\\on disk\nwaiting.").Set(-2.5);
  EXPECT_EQ(RenderText(r.Collect()),
            "# HELP hm_spool_bytes Bytes \"spooled\"\\\\on disk\\nwaiting.\n"
            "# TYPE hm_spool_bytes gauge\n"
            "hm_spool_bytes -2.5\n");
}

TEST(MetricsTextFormat, HistogramWithLabels) {
  Registry r;
  Family<Histogram>& f =
      r.AddHistogramFamily("hm_rtt_seconds", "Probe round trip.", {"nic"}, {0.001, 0.01, 1});
  Histogram& h = f.WithLabels({"nic0"});
  h.Observe(0.001);  // on the bound: counts in le="0.001"
  h.Observe(0.005);
  h.Observe(2);
  f.WithLabels({"nic1"});
  EXPECT_EQ(RenderText(r.Collect()),
            "# HELP hm_rtt_seconds Probe round trip.\n"
            "# TYPE hm_rtt_seconds histogram\n"
            "hm_rtt_seconds_bucket{nic=\"nic0\",le=\"0.001\"} 1\n"
            "hm_rtt_seconds_bucket{nic=\"nic0\",le=\"0.01\"} 2\n"
            "hm_rtt_seconds_bucket{nic=\"nic0\",le=\"1\"} 2\n"
            "hm_rtt_seconds_bucket{nic=\"nic0\",le=\"+Inf\"} 3\n"
            "hm_rtt_seconds_sum{nic=\"nic0\"} 2.006\n"
            "hm_rtt_seconds_count{nic=\"nic0\"} 3\n"
            "hm_rtt_seconds_bucket{nic=\"nic1\",le=\"0.001\"} 0\n"
            "hm_rtt_seconds_bucket{nic=\"nic1\",le=\"0.01\"} 0\n"
            "hm_rtt_seconds_bucket{nic=\"nic1\",le=\"1\"} 0\n"
            "hm_rtt_seconds_bucket{nic=\"nic1\",le=\"+Inf\"} 0\n"
            "hm_rtt_seconds_sum{nic=\"nic1\"} 0\n"
            "hm_rtt_seconds_count{nic=\"nic1\"} 0\n");
}

TEST(MetricsTextFormat, HistogramWithoutLabelsHasOnlyLe) {
  Registry r;
  r.AddHistogram("hm_delay_seconds", "Delay.", ExponentialBuckets(1e-6, 1000, 2)).Observe(5e-7);
  EXPECT_EQ(RenderText(r.Collect()),
            "# HELP hm_delay_seconds Delay.\n"
            "# TYPE hm_delay_seconds histogram\n"
            "hm_delay_seconds_bucket{le=\"1e-06\"} 1\n"
            "hm_delay_seconds_bucket{le=\"0.001\"} 1\n"
            "hm_delay_seconds_bucket{le=\"+Inf\"} 1\n"
            "hm_delay_seconds_sum 5e-07\n"
            "hm_delay_seconds_count 1\n");
}

// An unlabelled gauge family built by hand; no value means no series.
FamilySnapshot HandMadeGauge(std::string name, std::optional<double> value) {
  FamilySnapshot family;
  family.name = std::move(name);
  family.help = "Help.";
  family.type = MetricType::kGauge;
  if (value) family.series.emplace_back().value = *value;
  return family;
}

TEST(MetricsTextFormat, FamiliesInGivenOrderAndEmptyOnesLeftOut) {
  const std::vector<FamilySnapshot> families = {
      HandMadeGauge("c", std::numeric_limits<double>::quiet_NaN()), HandMadeGauge("b", {}),
      HandMadeGauge("a", -std::numeric_limits<double>::infinity())};
  EXPECT_EQ(RenderText(families),
            "# HELP c Help.\n# TYPE c gauge\nc NaN\n"
            "# HELP a Help.\n# TYPE a gauge\na -Inf\n");
}

TEST(MetricsTextFormat, ValuesPrintAsPrometheusExpects) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(-0.0), "0");
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(-7), "-7");
  EXPECT_EQ(FormatValue(1e6), "1000000");
  EXPECT_EQ(FormatValue(9007199254740993.0), "9007199254740992");
  EXPECT_EQ(FormatValue(1e20), "1e+20");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(1.5), "1.5");
  EXPECT_EQ(FormatValue(1e-6), "1e-06");
  EXPECT_EQ(FormatValue(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(MetricsTextFormat, ValuesRoundTripBitForBit) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100'000; ++i) {
    std::uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    const std::string text = FormatValue(v);
    const double back = std::strtod(text.c_str(), nullptr);
    ASSERT_EQ(std::memcmp(&back, &v, sizeof v), 0) << text;
  }
}

}  // namespace
}  // namespace hostmesh::metrics
