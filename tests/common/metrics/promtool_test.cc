// Prometheus' own linter accepts what prometheus-cpp's serializer writes, with every feature
// in play. Skips when promtool (Debian package `prometheus`) is missing.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "common/metrics/buckets.h"
#include "common/metrics/exposition.h"
#include "common/metrics/registry.h"

#ifndef HOSTMESH_PROMTOOL_PATH
#define HOSTMESH_PROMTOOL_PATH ""
#endif

namespace hostmesh::metrics {
namespace {

struct CheckResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs `promtool check metrics` with the exposition text on stdin.
CheckResult PromtoolCheckMetrics(const std::string& exposition) {
  std::string path = ::testing::TempDir() + "hm_promtool_XXXXXX";
  const int fd = mkstemp(path.data());
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, exposition.data(), exposition.size()),
            static_cast<ssize_t>(exposition.size()));
  close(fd);

  CheckResult result;
  const std::string command =
      std::string("'") + HOSTMESH_PROMTOOL_PATH + "' check metrics < '" + path + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  if (pipe != nullptr) {
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.output.append(buf, n);
    const int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  unlink(path.c_str());
  return result;
}

class MetricsPromtool : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(HOSTMESH_PROMTOOL_PATH).empty()) {
      GTEST_SKIP() << "promtool not found at configure time (install Debian package "
                      "'prometheus' and re-run cmake)";
    }
  }
};

TEST_F(MetricsPromtool, AcceptsEveryFeature) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Registry r;
  prometheus::Family<prometheus::Counter>& drops =
      r.AddCounterFamily("hostmesh_test_drops_total", "Drops; help with \"quotes\".");
  drops.Add({{"src", "nic0"}, {"dst", "back\\slash"}}).Increment();
  drops.Add({{"src", "nic0"}, {"dst", "\"quoted\""}}).Increment(2);
  drops.Add({{"src", "nic0"}, {"dst", "new\nline"}}).Increment(3);
  drops.Add({{"src", "nic0"}, {"dst", "caf\xc3\xa9"}}).Increment(static_cast<double>(1ULL << 60));
  drops.Add({{"src", "nic0"}, {"dst", ""}});
  r.AddCounter("hostmesh_test_probes_total", "Probes sent.").Increment(1'000'000);

  prometheus::Family<prometheus::Gauge>& error =
      r.AddGaugeFamily("hostmesh_test_clock_error_seconds", "Clock fit residual.");
  error.Add({{"nic", "nic0"}}).Set(std::numeric_limits<double>::quiet_NaN());
  error.Add({{"nic", "nic1"}}).Set(kInf);
  error.Add({{"nic", "nic2"}}).Set(-kInf);
  error.Add({{"nic", "nic3"}}).Set(-1.25e-9);
  r.AddGauge("hostmesh_test_spool_bytes", "Spooled bytes.").Set(123456789012.0);

  prometheus::Family<prometheus::Histogram>& rtt =
      r.AddHistogramFamily("hostmesh_test_rtt_seconds", "Round trip.");
  const std::vector<double> bounds = ExponentialBucketsRange(1e-6, 1, 13);
  for (double v : {0.0, 1e-6, 3e-6, 0.02, 1.0, 5.0, kInf})
    rtt.Add({{"nic", "nic0"}}, bounds).Observe(v);
  rtt.Add({{"nic", "nic1"}}, bounds);
  r.AddHistogram("hostmesh_test_batch_size_bytes", "Batch size.", LinearBuckets(100, 100, 5))
      .Observe(250);

  r.AddCallbackCounter("hostmesh_test_cpu_seconds_total", "CPU time.", [] { return 12.75; });
  r.AddCallbackFamily(MetricType::kGauge, "hostmesh_test_port_up", "Port state.", {"nic"}, [] {
    return std::vector<ScrapedValue>{{{"nic0"}, 1}, {{"nic1"}, 0}};
  });

  const std::string text = RenderText(r);
  const CheckResult result = PromtoolCheckMetrics(text);
  EXPECT_EQ(result.exit_code, 0) << result.output << "\n--- input ---\n" << text;
  EXPECT_EQ(result.output, "") << "--- input ---\n" << text;
}

// Guards the harness: a lint problem must make the check fail.
TEST_F(MetricsPromtool, RejectsACounterWithoutTotal) {
  prometheus::MetricFamily bad;
  bad.name = "hostmesh_test_probes";
  bad.help = "Probes.";
  bad.type = prometheus::MetricType::Counter;
  bad.metric.emplace_back().counter.value = 1;
  const CheckResult result = PromtoolCheckMetrics(RenderText({bad}));
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("_total"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace hostmesh::metrics
