// Declaring families: naming rules, label handling, concurrency, collection.
#include "common/metrics/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/metrics/names.h"

namespace hostmesh::metrics {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Names(const std::vector<prometheus::MetricFamily>& families) {
  std::vector<std::string> names;
  for (const prometheus::MetricFamily& f : families) names.push_back(f.name);
  return names;
}

std::vector<std::string> LabelValues(const prometheus::ClientMetric& metric) {
  std::vector<std::string> values;
  for (const auto& label : metric.label) values.push_back(label.value);
  return values;
}

ScrapeCallback Constant(std::vector<ScrapedValue> values) {
  return [values] { return values; };
}

TEST(MetricsNames, MetricNamesFollowPrometheusRegex) {
  EXPECT_TRUE(IsValidMetricName("hostmesh_probes_total"));
  EXPECT_TRUE(IsValidMetricName("a:b_c9"));
  EXPECT_TRUE(IsValidMetricName("_x"));
  EXPECT_TRUE(IsValidMetricName(":x"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_FALSE(IsValidMetricName("9x"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_FALSE(IsValidMetricName("a b"));
  EXPECT_FALSE(IsValidMetricName("d\xc3\xa9j\xc3\xa0"));
}

TEST(MetricsNames, LabelNamesFollowPrometheusRegex) {
  EXPECT_TRUE(IsValidLabelName("nic"));
  EXPECT_TRUE(IsValidLabelName("_src2"));
  EXPECT_FALSE(IsValidLabelName(""));
  EXPECT_FALSE(IsValidLabelName("2nic"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
  EXPECT_FALSE(IsValidLabelName("a.b"));
}

TEST(MetricsRegistry, RejectsBadDeclarations) {
  Registry r;
  const auto gauge_with = [&r](std::vector<std::string> labels) {
    r.AddCallbackFamily(MetricType::kGauge, "g", "h", std::move(labels), Constant({}));
  };
  EXPECT_THROW(r.AddCounter("bad-name_total", "h"), std::invalid_argument);
  EXPECT_THROW(r.AddCounter("no_suffix", "h"), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("queue_total", "h"), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("queue_count", "h"), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("queue_bucket", "h"), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("queue", ""), std::invalid_argument);
  // prometheus-cpp 1.0.1 writes HELP text as is: a newline would end the line.
  EXPECT_THROW(r.AddGauge("queue", "two\nlines"), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("queue", "back\\slash"), std::invalid_argument);
  EXPECT_THROW(gauge_with({"1nic"}), std::invalid_argument);
  EXPECT_THROW(gauge_with({"__name"}), std::invalid_argument);
  EXPECT_THROW(gauge_with({"nic", "nic"}), std::invalid_argument);
  EXPECT_THROW(r.AddHistogram("h_seconds", "h", {2, 1}), std::invalid_argument);
  // Nothing half-registered: every name is still free.
  EXPECT_TRUE(r.Collect().empty());
  EXPECT_NO_THROW(r.AddGauge("queue", "h"));
  EXPECT_NO_THROW(gauge_with({"nic"}));
}

TEST(MetricsRegistry, ErrorNamesTheMetricAndTheRule) {
  Registry r;
  try {
    r.AddCounter("probes", "h");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'probes'"));
    EXPECT_THAT(e.what(), HasSubstr("_total"));
  }
}

TEST(MetricsRegistry, RejectsDuplicateAndClashingNames) {
  Registry r;
  r.AddCounter("probes_total", "h");
  r.AddHistogram("rtt_seconds", "h", {1});
  EXPECT_THROW(r.AddCounter("probes_total", "h"), std::invalid_argument);
  EXPECT_THROW(r.AddCounterFamily("probes_total", "h"), std::invalid_argument);
  EXPECT_THROW(r.AddCallbackCounter("probes_total", "h", [] { return 1.0; }),
               std::invalid_argument);
  EXPECT_THROW(r.AddGauge("rtt_seconds", "h"), std::invalid_argument);
  // A histogram's series names are taken too.
  EXPECT_THROW(r.AddHistogram("rtt_seconds_sum", "h", {1}), std::invalid_argument);
  EXPECT_NO_THROW(r.AddCounter("rtt_seconds_count_total", "h"));  // a distinct name
}

// The agent and the ingest resolve their children once and keep the reference.
TEST(MetricsRegistry, AddReturnsTheSameChildEveryTime) {
  Registry r;
  prometheus::Family<prometheus::Counter>& f = r.AddCounterFamily("drops_total", "h");
  prometheus::Counter& a = f.Add({{"src", "nic0"}, {"dst", "nic1"}});
  prometheus::Counter& b = f.Add({{"src", "nic1"}, {"dst", "nic0"}});
  EXPECT_NE(&a, &b);
  for (int i = 0; i < 100; ++i) f.Add({{"src", "x" + std::to_string(i)}, {"dst", "y"}});
  EXPECT_EQ(&f.Add({{"dst", "nic1"}, {"src", "nic0"}}), &a);
}

TEST(MetricsRegistry, UnlabelledMetricsExportZeroFromTheStart) {
  Registry r;
  r.AddCounter("a_total", "h");
  r.AddGaugeFamily("b", "h");  // no child yet: no series, left out
  r.AddCallbackFamily(MetricType::kGauge, "c", "h", {"nic"}, Constant({}));
  const std::vector<prometheus::MetricFamily> families = r.Collect();
  ASSERT_THAT(Names(families), ElementsAre("a_total"));
  ASSERT_EQ(families[0].metric.size(), 1u);
  EXPECT_EQ(families[0].metric[0].counter.value, 0);
}

TEST(MetricsRegistry, CollectSortsFamiliesByNameAndSeriesByLabels) {
  Registry r;
  prometheus::Family<prometheus::Gauge>& z = r.AddGaugeFamily("z", "h");
  r.AddGauge("a", "h");
  r.AddCallbackGauge("m", "h", [] { return 1.0; });
  z.Add({{"nic", "nic2"}}).Set(2);
  z.Add({{"nic", "nic10"}}).Set(10);
  z.Add({{"nic", "nic1"}}).Set(1);
  const std::vector<prometheus::MetricFamily> families = r.Collect();
  EXPECT_THAT(Names(families), ElementsAre("a", "m", "z"));
  std::vector<std::string> labels;
  for (const prometheus::ClientMetric& m : families[2].metric) labels.push_back(m.label[0].value);
  EXPECT_THAT(labels, ElementsAre("nic1", "nic10", "nic2"));
}

TEST(MetricsRegistry, CallbacksAreReadAtCollectTime) {
  Registry r;
  double rss = 100;
  r.AddCallbackGauge("rss_bytes", "h", [&rss] { return rss; });
  r.AddCallbackCounter("cpu_seconds_total", "h", [] { return 1.5; });
  r.AddCallbackFamily(MetricType::kGauge, "port_up", "h", {"nic", "port"},
                      Constant({{{"nic1", "b"}, 0}, {{"nic0", "a"}, 1}}));
  rss = 200;
  const std::vector<prometheus::MetricFamily> families = r.Collect();
  ASSERT_THAT(Names(families), ElementsAre("cpu_seconds_total", "port_up", "rss_bytes"));
  EXPECT_EQ(families[0].type, prometheus::MetricType::Counter);
  EXPECT_EQ(families[0].metric[0].counter.value, 1.5);
  EXPECT_EQ(families[1].type, prometheus::MetricType::Gauge);
  EXPECT_THAT(LabelValues(families[1].metric[0]), ElementsAre("nic0", "a"));
  // Labels in declaration order, not alphabetical.
  EXPECT_EQ(families[1].metric[0].label[0].name, "nic");
  EXPECT_EQ(families[2].metric[0].gauge.value, 200);
}

TEST(MetricsRegistry, BadCallbacksAreRejected) {
  Registry r;
  EXPECT_THROW(r.AddCallbackGauge("g", "h", nullptr), std::invalid_argument);
  EXPECT_THROW(r.AddCallbackFamily(MetricType::kHistogram, "h_seconds", "h", {}, Constant({})),
               std::invalid_argument);

  Registry wrong_count;
  wrong_count.AddCallbackFamily(MetricType::kGauge, "g", "h", {"nic"}, Constant({{{}, 1}}));
  EXPECT_THROW(wrong_count.Collect(), std::invalid_argument);
}

// Two agents that both call themselves h1 once made the analyzer's /metrics
// answer 500 (and Kubernetes restart it): a clash keeps the first series.
TEST(MetricsRegistry, RepeatedLabelValuesKeepTheFirstSeriesAndAreCounted) {
  Registry repeated;
  repeated.AddCallbackFamily(MetricType::kGauge, "g", "h", {"nic"},
                             Constant({{{"b"}, 3}, {{"a"}, 1}, {{"a"}, 2}}));
  const std::vector<prometheus::MetricFamily> families = repeated.Collect();
  ASSERT_EQ(families.size(), 1u);
  ASSERT_EQ(families[0].metric.size(), 2u);
  EXPECT_EQ(families[0].metric[0].label[0].value, "a");
  EXPECT_EQ(families[0].metric[0].gauge.value, 1);
  EXPECT_EQ(families[0].metric[1].gauge.value, 3);
  EXPECT_EQ(repeated.series_conflicts(), 1u);
}

TEST(MetricsRegistry, ConcurrentUpdatesAreNotLost) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20'000;
  Registry r;
  prometheus::Family<prometheus::Counter>& counters = r.AddCounterFamily("probes_total", "h");
  prometheus::Gauge& inflight = r.AddGauge("inflight", "h");
  prometheus::Histogram& rtt = r.AddHistogram("rtt_seconds", "h", {0.5});

  std::latch start(kThreads);
  std::vector<prometheus::Counter*> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();  // maximise contention, also on child creation
      prometheus::Counter& c = counters.Add({{"nic", "nic0"}});
      seen[t] = &c;
      for (int i = 0; i < kPerThread; ++i) {
        c.Increment();
        inflight.Increment(2);
        inflight.Decrement();
        rtt.Observe(i % 2 == 0 ? 0.25 : 1.0);
      }
    });
  }
  for (std::thread& t : threads) t.join();

  for (prometheus::Counter* c : seen) EXPECT_EQ(c, seen[0]);
  constexpr std::uint64_t kTotal = std::uint64_t{kThreads} * kPerThread;
  EXPECT_EQ(seen[0]->Value(), static_cast<double>(kTotal));
  EXPECT_EQ(inflight.Value(), static_cast<double>(kTotal));
  const prometheus::ClientMetric::Histogram h = rtt.Collect().histogram;
  ASSERT_EQ(h.bucket.size(), 2u);
  EXPECT_EQ(h.bucket[0].cumulative_count, kTotal / 2);
  EXPECT_EQ(h.bucket[1].cumulative_count, kTotal);
  EXPECT_EQ(h.sample_sum, 0.25 * (kTotal / 2) + 1.0 * (kTotal / 2));
}

}  // namespace
}  // namespace hostmesh::metrics
