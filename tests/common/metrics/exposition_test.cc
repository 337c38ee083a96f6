// The exposition text as prometheus-cpp's serializer writes it, byte for byte,
// for what the project relies on: label order and escaping, integers without
// exponent, histograms with cumulative buckets and +Inf, empty families left out.
#include "common/metrics/exposition.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/metrics/buckets.h"
#include "common/metrics/registry.h"

namespace hostmesh::metrics {
namespace {

// One unlabelled gauge family with this value.
std::string RenderGauge(double value) {
  Registry r;
  r.AddGauge("g", "Help.").Set(value);
  return RenderText(r);
}

TEST(MetricsExposition, CallbackCounterKeepsLabelOrderAndEscapes) {
  Registry r;
  r.AddCallbackFamily(
      MetricType::kCounter, "hm_drops_total", "Dropped probes.", {"src", "dst"}, [] {
        return std::vector<ScrapedValue>{{{"nic0", "a\"b\\c\nd"}, 3}, {{"nic0", "nic1"}, 1}};
      });
  EXPECT_EQ(RenderText(r),
            "# HELP hm_drops_total Dropped probes.\n"
            "# TYPE hm_drops_total counter\n"
            "hm_drops_total{src=\"nic0\",dst=\"a\\\"b\\\\c\\nd\"} 3\n"
            "hm_drops_total{src=\"nic0\",dst=\"nic1\"} 1\n");
}

TEST(MetricsExposition, GaugeWithoutLabels) {
  Registry r;
  r.AddGauge("hm_spool_bytes", "Bytes \"spooled\" on disk.").Set(-2.5);
  EXPECT_EQ(RenderText(r),
            "# HELP hm_spool_bytes Bytes \"spooled\" on disk.\n"
            "# TYPE hm_spool_bytes gauge\n"
            "hm_spool_bytes -2.5\n");
}

TEST(MetricsExposition, HistogramWithLabels) {
  Registry r;
  prometheus::Family<prometheus::Histogram>& f =
      r.AddHistogramFamily("hm_rtt_seconds", "Probe round trip.");
  prometheus::Histogram& h = f.Add({{"nic", "nic0"}}, std::vector<double>{0.001, 0.01, 1});
  h.Observe(0.001);  // on the bound: counts in le="0.001"
  h.Observe(0.005);
  h.Observe(2);
  f.Add({{"nic", "nic1"}}, std::vector<double>{0.001, 0.01, 1});
  EXPECT_EQ(RenderText(r),
            "# HELP hm_rtt_seconds Probe round trip.\n"
            "# TYPE hm_rtt_seconds histogram\n"
            "hm_rtt_seconds_count{nic=\"nic0\"} 3\n"
            "hm_rtt_seconds_sum{nic=\"nic0\"} 2.006\n"
            "hm_rtt_seconds_bucket{nic=\"nic0\",le=\"0.001\"} 1\n"
            "hm_rtt_seconds_bucket{nic=\"nic0\",le=\"0.01\"} 2\n"
            "hm_rtt_seconds_bucket{nic=\"nic0\",le=\"1\"} 2\n"
            "hm_rtt_seconds_bucket{nic=\"nic0\",le=\"+Inf\"} 3\n"
            "hm_rtt_seconds_count{nic=\"nic1\"} 0\n"
            "hm_rtt_seconds_sum{nic=\"nic1\"} 0\n"
            "hm_rtt_seconds_bucket{nic=\"nic1\",le=\"0.001\"} 0\n"
            "hm_rtt_seconds_bucket{nic=\"nic1\",le=\"0.01\"} 0\n"
            "hm_rtt_seconds_bucket{nic=\"nic1\",le=\"1\"} 0\n"
            "hm_rtt_seconds_bucket{nic=\"nic1\",le=\"+Inf\"} 0\n");
}

TEST(MetricsExposition, HistogramBoundsPrintAsDeclared) {
  Registry r;
  r.AddHistogram("hm_delay_seconds", "Delay.", ExponentialBuckets(1e-6, 1000, 2)).Observe(5e-7);
  EXPECT_EQ(RenderText(r),
            "# HELP hm_delay_seconds Delay.\n"
            "# TYPE hm_delay_seconds histogram\n"
            "hm_delay_seconds_count 1\n"
            "hm_delay_seconds_sum 5e-07\n"
            "hm_delay_seconds_bucket{le=\"1e-06\"} 1\n"
            "hm_delay_seconds_bucket{le=\"0.001\"} 1\n"
            "hm_delay_seconds_bucket{le=\"+Inf\"} 1\n");
}

TEST(MetricsExposition, EmptyFamiliesAreLeftOut) {
  Registry r;
  r.AddGaugeFamily("b", "Help.");
  r.AddCallbackFamily(MetricType::kGauge, "c", "Help.", {"nic"},
                      [] { return std::vector<ScrapedValue>{}; });
  r.AddGauge("a", "Help.").Set(1);
  EXPECT_EQ(RenderText(r), "# HELP a Help.\n# TYPE a gauge\na 1\n");
}

TEST(MetricsExposition, ValuesPrintAsPrometheusReadsThem) {
  const auto value = [](double v) {
    const std::string text = RenderGauge(v);
    return text.substr(text.rfind(' ') + 1, text.size() - text.rfind(' ') - 2);
  };
  EXPECT_EQ(value(0), "0");
  EXPECT_EQ(value(42), "42");
  EXPECT_EQ(value(-7), "-7");
  EXPECT_EQ(value(1e6), "1000000");
  // Counters stay exact integers up to 2^53.
  EXPECT_EQ(value(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(value(1e20), "1e+20");
  EXPECT_EQ(value(0.1), "0.1");
  EXPECT_EQ(value(1.5), "1.5");
  EXPECT_EQ(value(1e-6), "1e-06");
  EXPECT_EQ(value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(value(-std::numeric_limits<double>::infinity()), "-Inf");
  // Prometheus parses special values case-insensitively (promtool_test).
  EXPECT_EQ(value(std::numeric_limits<double>::quiet_NaN()), "Nan");
}

}  // namespace
}  // namespace hostmesh::metrics
