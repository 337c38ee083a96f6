// The agent's /metrics: names promtool accepts, values read from the
// published snapshot, and the series budget of DESIGN 3 with 8 NICs.
#include "agent/main/agent_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/histogram.h>

#include <string>

#include "common/metrics/exposition.h"
#include "tests/support/promtool_check.h"
#include "tests/support/series_count.h"

#ifndef HOSTMESH_PROMTOOL_PATH
#define HOSTMESH_PROMTOOL_PATH ""
#endif

namespace hostmesh::agent::app {
namespace {

std::vector<std::string> NicNames(std::size_t n) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) names.push_back("nic" + std::to_string(i));
  return names;
}

LoopSnapshot Snapshot(std::size_t n) {
  LoopSnapshot s;
  s.pairs.resize(n * n);
  for (std::size_t i = 0; i < n * n; ++i) {
    s.pairs[i].sent = 10 + i;
    s.pairs[i].received = 9 + i;
    s.pairs[i].timed_out = 1;
    s.pairs[i].late = i % 2;
  }
  s.prober.resize(n);
  s.prober[0].send_errors = 3;
  s.prober[1].received[static_cast<std::size_t>(DecodeStatus::kCorrupt)] = 5;
  s.receive_errors.assign(n, 0);
  s.clock_fit_error_seconds.assign(n, 0);
  s.clock_fit_error_seconds[2] = 2.5e-07;  // a NIC-clock fit's error bound, 250 ns
  s.distinct_ports.assign(n * n, 16);
  // Verbs NICs: every one but nic0 (a NIC that did not open, or UDP).
  s.rnic_health.resize(n);
  for (std::size_t i = 1; i < n; ++i) {
    RnicHealthStats h;
    h.async_events = {{"port_down", i == 1 ? 2 : 0}, {"qp_fatal", 1}};
    h.qp_recoveries = i;
    h.reopens = i == 3 ? 1 : 0;
    h.receive_queue_empty = i == 2 ? 4 : 0;
    h.port_up = i != 1;  // nic1's port is down
    s.rnic_health[i] = h;
  }
  // UDP NICs' error queues: nic0 only.
  s.error_queue.resize(n);
  s.error_queue[0] = ErrorQueueStats{6, 1};
  return s;
}

struct Fixture {
  explicit Fixture(std::size_t nics)
      : metrics(registry, NicNames(nics), [] {
          upload::UploadCounters c;
          c.queue_depth = 2;
          c.bytes_buffered = 1234;
          c.batches_sent = 7;
          c.batches_acknowledged = 5;
          return c;
        }) {
    metrics.SetTimestampSources(std::vector<TimestampSource>(nics, TimestampSource::kKernel));
    std::vector<SourcePortRotation> rotations(nics, SourcePortRotation::kFlowLabel);
    rotations[0] = SourcePortRotation::kPerQp;
    metrics.SetSourcePortRotations(rotations);
    ProbeResult r;
    r.src_nic = 1;
    r.app_send_ns = 1000;
    r.nic_send_ns = 2000;
    r.nic_recv_ns = 12000;
    r.app_recv_ns = 15000;
    metrics.ObserveResult(r);  // reaches the histograms with the next Publish
    metrics.Publish(Snapshot(nics));
  }
  metrics::Registry registry;
  AgentMetrics metrics;
};

TEST(agent_metrics, ValuesComeFromTheSnapshot) {
  Fixture f(4);
  const std::string text = metrics::RenderText(f.registry);
  for (const char* line : {
           "hostmesh_agent_probes_sent_total{src_nic=\"nic0\",dst_nic=\"nic1\"} 11",
           "hostmesh_agent_probes_received_total{src_nic=\"nic1\",dst_nic=\"nic0\"} 13",
           "hostmesh_agent_probes_timeouts_total{src_nic=\"nic0\",dst_nic=\"nic1\"} 1",
           "hostmesh_agent_probes_late_total{src_nic=\"nic0\",dst_nic=\"nic1\"} 1",
           "hostmesh_agent_send_errors_total{nic=\"nic0\"} 3",
           "hostmesh_agent_rejected_packets_total{nic=\"nic1\",reason=\"corrupt\"} 5",
           "hostmesh_agent_timestamp_source{nic=\"nic2\",source=\"kernel\"} 1",
           "hostmesh_agent_port_pool_distinct_ports{src_nic=\"nic3\",dst_nic=\"nic2\"} 16",
           "hostmesh_agent_upload_queue_depth_batches 2",
           "hostmesh_agent_upload_buffered_bytes 1234",
           "hostmesh_agent_upload_batches_acknowledged_total 5",
           "hostmesh_agent_network_latency_seconds_count{src_nic=\"nic1\"} 1",
           "hostmesh_agent_processing_delay_seconds_count{src_nic=\"nic1\"} 1",
           "hostmesh_agent_source_port_rotation{nic=\"nic0\",mode=\"per_qp\"} 1",
           "hostmesh_agent_source_port_rotation{nic=\"nic2\",mode=\"flow_label\"} 1",
           "hostmesh_agent_rdma_async_events_total{nic=\"nic1\",event=\"port_down\"} 2",
           "hostmesh_agent_rdma_async_events_total{nic=\"nic3\",event=\"qp_fatal\"} 1",
           "hostmesh_agent_qp_recoveries_total{nic=\"nic2\",outcome=\"ok\"} 2",
           "hostmesh_agent_rdma_reopens_total{nic=\"nic3\"} 1",
           "hostmesh_agent_receive_queue_empty_total{nic=\"nic2\"} 4",
           "hostmesh_agent_clock_fit_error_seconds{nic=\"nic2\"} 2.5e-07",
           "hostmesh_agent_clock_fit_error_seconds{nic=\"nic1\"} 0",
           "hostmesh_agent_rdma_reopens_total{nic=\"nic2\"} 0",
           // Kept while the port is down, as 0.
           "hostmesh_agent_rdma_port_up{nic=\"nic1\"} 0",
           "hostmesh_agent_rdma_port_up{nic=\"nic2\"} 1",
           "hostmesh_agent_error_queue_messages_total{nic=\"nic0\",kind=\"icmp_error\"} 6",
           "hostmesh_agent_error_queue_messages_total{nic=\"nic0\",kind=\"other\"} 1",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n--- in ---\n" << text;
  }
  // A NIC without verbs health (not open, or UDP) has no RDMA series.
  EXPECT_EQ(text.find("hostmesh_agent_qp_recoveries_total{nic=\"nic0\""), std::string::npos);
  EXPECT_EQ(text.find("hostmesh_agent_rdma_port_up{nic=\"nic0\""), std::string::npos);
  // And a verbs NIC has no error-queue series.
  EXPECT_EQ(text.find("hostmesh_agent_error_queue_messages_total{nic=\"nic1\""), std::string::npos);
  EXPECT_EQ(text.find("mode=\"flow_label\"} 0"), std::string::npos);  // only the NIC's mode
  // Only the NIC's timestamp source, as 1 (an info metric).
  EXPECT_EQ(text.find("hostmesh_agent_timestamp_source{nic=\"nic2\",source=\"hardware\"}"),
            std::string::npos);
  // No self-pairs: a NIC never probes itself.
  EXPECT_EQ(text.find("src_nic=\"nic0\",dst_nic=\"nic0\""), std::string::npos);
  // A rejection reason no packet had yet has no series.
  EXPECT_EQ(text.find("hostmesh_agent_rejected_packets_total{nic=\"nic1\",reason=\"foreign\"}"),
            std::string::npos);
}

TEST(agent_metrics, LatencyReachesTheHistogramBucketsWithEachPublish) {
  Fixture f(2);
  const auto count = [&f] {
    const std::string text = metrics::RenderText(f.registry);
    const std::string line = "hostmesh_agent_network_latency_seconds_count{src_nic=\"nic1\"} ";
    const std::size_t at = text.find(line);
    return at == std::string::npos ? std::string("none") : text.substr(at + line.size(), 1);
  };
  // The fixture's probe: 10 us on the wire, exactly a bound, so in le="1e-05".
  const std::string text = metrics::RenderText(f.registry);
  EXPECT_NE(
      text.find("hostmesh_agent_network_latency_seconds_bucket{src_nic=\"nic1\",le=\"1e-05\"} 1"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("hostmesh_agent_network_latency_seconds_bucket{src_nic=\"nic1\",le=\"3."
                      "16227766017e-06\"} 0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("hostmesh_agent_network_latency_seconds_sum{src_nic=\"nic1\"} 1e-05"),
            std::string::npos)
      << text;

  ProbeResult r;
  r.src_nic = 1;
  r.app_send_ns = 1'000;
  r.nic_send_ns = 2'000;
  r.nic_recv_ns = 2'002'000;
  r.app_recv_ns = 2'003'000;
  f.metrics.ObserveResult(r);
  EXPECT_EQ(count(), "1");  // not before the loop publishes
  f.metrics.Publish(Snapshot(2));
  EXPECT_EQ(count(), "2");
}

TEST(agent_metrics, EachLatencyLandsInTheBucketPrometheusWouldPick) {
  Fixture f(2);
  prometheus::Histogram reference(AgentMetrics::LatencyBuckets());
  reference.Observe(10e-6);  // the fixture's probe
  // Below, on and between the bounds, and past the last one.
  for (const std::int64_t ns : {0LL, 1LL, 999LL, 1'000LL, 1'001LL, 3'162LL, 3'163LL, 99'999LL,
                                316'228LL, 999'999'999LL, 1'000'000'000LL, 7'000'000'000LL}) {
    ProbeResult r;
    r.src_nic = 1;
    r.nic_send_ns = 5'000;
    r.nic_recv_ns = 5'000 + ns;
    f.metrics.ObserveResult(r);
    reference.Observe(static_cast<double>(ns) * 1e-9);
  }
  f.metrics.Publish(Snapshot(2));
  const prometheus::ClientMetric expected = reference.Collect();
  bool found = false;
  for (const prometheus::MetricFamily& family : f.registry.Collect()) {
    if (family.name != "hostmesh_agent_network_latency_seconds") continue;
    for (const prometheus::ClientMetric& m : family.metric) {
      if (m.label.empty() || m.label[0].value != "nic1") continue;
      found = true;
      ASSERT_EQ(m.histogram.bucket.size(), expected.histogram.bucket.size());
      for (std::size_t i = 0; i < m.histogram.bucket.size(); ++i) {
        EXPECT_EQ(m.histogram.bucket[i].cumulative_count,
                  expected.histogram.bucket[i].cumulative_count)
            << "le " << m.histogram.bucket[i].upper_bound;
      }
    }
  }
  EXPECT_TRUE(found);
}

TEST(agent_metrics, EightNicsStayUnderTheSeriesBudget) {
  Fixture f(8);
  EXPECT_LT(hostmesh::testing::CountSeries(f.registry.Collect()), 1000U);
}

TEST(agent_metrics, PromtoolAcceptsTheExposition) {
  if (std::string(HOSTMESH_PROMTOOL_PATH).empty()) {
    GTEST_SKIP() << "promtool not found at configure time (Debian package 'prometheus')";
  }
  Fixture f(8);
  const std::string text = metrics::RenderText(f.registry);
  const hostmesh::testing::PromtoolResult result =
      hostmesh::testing::PromtoolCheck(HOSTMESH_PROMTOOL_PATH, text);
  EXPECT_TRUE(result.ok) << result.output << "\n---\n" << text;
  EXPECT_EQ(result.output, "") << text;
}

}  // namespace
}  // namespace hostmesh::agent::app
