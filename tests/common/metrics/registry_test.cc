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

std::vector<std::string> Names(const std::vector<FamilySnapshot>& families) {
  std::vector<std::string> names;
  for (const FamilySnapshot& f : families) names.push_back(f.name);
  return names;
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
  EXPECT_THROW(r.AddCounter("bad-name_total", "h"), std::invalid_argument);
  EXPECT_THROW(r.AddCounter("no_suffix", "h"), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("queue_total", "h"), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("queue_count", "h"), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("queue_bucket", "h"), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("queue", ""), std::invalid_argument);
  EXPECT_THROW(r.AddGaugeFamily("g", "h", {"1nic"}), std::invalid_argument);
  EXPECT_THROW(r.AddGaugeFamily("g", "h", {"__name"}), std::invalid_argument);
  EXPECT_THROW(r.AddGaugeFamily("g", "h", {"nic", "nic"}), std::invalid_argument);
  EXPECT_THROW(r.AddHistogramFamily("h_seconds", "h", {"le"}, {1}), std::invalid_argument);
  EXPECT_THROW(r.AddHistogram("h_seconds", "h", {2, 1}), std::invalid_argument);
  // Nothing half-registered: every name is still free.
  EXPECT_TRUE(r.Collect().empty());
  EXPECT_NO_THROW(r.AddGauge("queue", "h"));
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
  EXPECT_THROW(r.AddCounterFamily("probes_total", "h", {"nic"}), std::invalid_argument);
  EXPECT_THROW(r.AddCallbackCounter("probes_total", "h", [] { return 1.0; }),
               std::invalid_argument);
  EXPECT_THROW(r.AddGauge("rtt_seconds", "h"), std::invalid_argument);
  // A histogram's series names are taken too.
  EXPECT_THROW(r.AddHistogram("rtt_seconds_sum", "h", {1}), std::invalid_argument);
  EXPECT_NO_THROW(r.AddCounter("rtt_seconds_count_total", "h"));  // a distinct name
}

TEST(MetricsRegistry, WithLabelsReturnsTheSameChildEveryTime) {
  Registry r;
  Family<Counter>& f = r.AddCounterFamily("drops_total", "h", {"src", "dst"});
  Counter& a = f.WithLabels({"nic0", "nic1"});
  Counter& b = f.WithLabels({"nic1", "nic0"});
  EXPECT_NE(&a, &b);
  for (int i = 0; i < 100; ++i) f.WithLabels({"x" + std::to_string(i), "y"});
  const std::vector<std::string> values = {"nic0", "nic1"};
  EXPECT_EQ(&f.WithLabels(values), &a);
  EXPECT_EQ(&f.WithLabels({"nic0", "nic1"}), &a);
}

TEST(MetricsRegistry, WrongLabelCountThrows) {
  Registry r;
  Family<Gauge>& f = r.AddGaugeFamily("up", "h", {"nic"});
  EXPECT_THROW(f.WithLabels({}), std::invalid_argument);
  EXPECT_THROW(f.WithLabels({"a", "b"}), std::invalid_argument);
  EXPECT_NO_THROW(f.WithLabels({"a"}));
}

TEST(MetricsRegistry, UnlabelledMetricsExportZeroFromTheStart) {
  Registry r;
  r.AddCounter("a_total", "h");
  r.AddGaugeFamily("b", "h", {"nic"});  // no child yet: no series
  const std::vector<FamilySnapshot> families = r.Collect();
  ASSERT_EQ(families.size(), 2u);
  ASSERT_EQ(families[0].series.size(), 1u);
  EXPECT_EQ(families[0].series[0].value, 0);
  EXPECT_TRUE(families[1].series.empty());
}

TEST(MetricsRegistry, CollectSortsFamiliesByNameAndSeriesByLabels) {
  Registry r;
  Family<Gauge>& z = r.AddGaugeFamily("z", "h", {"nic"});
  r.AddGauge("a", "h");
  r.AddGauge("m", "h");
  z.WithLabels({"nic2"}).Set(2);
  z.WithLabels({"nic10"}).Set(10);
  z.WithLabels({"nic1"}).Set(1);
  const std::vector<FamilySnapshot> families = r.Collect();
  EXPECT_THAT(Names(families), ElementsAre("a", "m", "z"));
  std::vector<std::string> labels;
  for (const SeriesSnapshot& s : families[2].series) labels.push_back(s.label_values[0]);
  EXPECT_THAT(labels, ElementsAre("nic1", "nic10", "nic2"));
}

TEST(MetricsRegistry, CallbacksAreReadAtCollectTime) {
  Registry r;
  double rss = 100;
  r.AddCallbackGauge("rss_bytes", "h", [&rss] { return rss; });
  r.AddCallbackCounter("cpu_seconds_total", "h", [] { return 1.5; });
  r.AddCallbackFamily(MetricType::kGauge, "port_up", "h", {"nic"}, [] {
    return std::vector<ScrapedValue>{{{"nic1"}, 0}, {{"nic0"}, 1}};
  });
  rss = 200;
  const std::vector<FamilySnapshot> families = r.Collect();
  ASSERT_THAT(Names(families), ElementsAre("cpu_seconds_total", "port_up", "rss_bytes"));
  EXPECT_EQ(families[0].type, MetricType::kCounter);
  EXPECT_EQ(families[0].series[0].value, 1.5);
  EXPECT_THAT(families[1].series[0].label_values, ElementsAre("nic0"));
  EXPECT_EQ(families[2].series[0].value, 200);
}

TEST(MetricsRegistry, BadCallbacksAreRejected) {
  Registry r;
  EXPECT_THROW(r.AddCallbackGauge("g", "h", nullptr), std::invalid_argument);
  EXPECT_THROW(r.AddCallbackFamily(MetricType::kHistogram, "h_seconds", "h", {},
                                   [] { return std::vector<ScrapedValue>{}; }),
               std::invalid_argument);

  Registry wrong_count;
  wrong_count.AddCallbackFamily(MetricType::kGauge, "g", "h", {"nic"}, [] {
    return std::vector<ScrapedValue>{{{}, 1}};
  });
  EXPECT_THROW(wrong_count.Collect(), std::invalid_argument);

  Registry repeated;
  repeated.AddCallbackFamily(MetricType::kGauge, "g", "h", {"nic"}, [] {
    return std::vector<ScrapedValue>{{{"a"}, 1}, {{"a"}, 2}};
  });
  EXPECT_THROW(repeated.Collect(), std::invalid_argument);
}

TEST(MetricsRegistry, ConcurrentUpdatesAreNotLost) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 100'000;
  Registry r;
  Family<Counter>& counters = r.AddCounterFamily("probes_total", "h", {"nic"});
  Gauge& inflight = r.AddGauge("inflight", "h");
  Histogram& rtt = r.AddHistogram("rtt_seconds", "h", {0.5});

  std::latch start(kThreads);
  std::vector<Counter*> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();  // maximise contention, also on child creation
      Counter& c = counters.WithLabels({"nic0"});
      seen[t] = &c;
      for (int i = 0; i < kPerThread; ++i) {
        c.Inc();
        inflight.Inc(2);
        inflight.Dec();
        rtt.Observe(i % 2 == 0 ? 0.25 : 1.0);
      }
    });
  }
  for (std::thread& t : threads) t.join();

  for (Counter* c : seen) EXPECT_EQ(c, seen[0]);
  constexpr std::uint64_t kTotal = std::uint64_t{kThreads} * kPerThread;
  EXPECT_EQ(seen[0]->Value(), kTotal);
  EXPECT_EQ(inflight.Value(), static_cast<double>(kTotal));
  SeriesSnapshot s;
  rtt.SnapshotInto(s);
  EXPECT_THAT(s.cumulative_counts, ElementsAre(kTotal / 2, kTotal));
  EXPECT_EQ(s.sum, 0.25 * (kTotal / 2) + 1.0 * (kTotal / 2));
}

}  // namespace
}  // namespace hostmesh::metrics
