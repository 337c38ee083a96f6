// The telemetry families of the agent's /metrics: values from the board,
// bytes not words, state gauges that stay while a port is down, only the
// configured pause priorities, and the whole agent within the series budget
// of DESIGN 3 (under 1,000 with 8 NICs) when every counter is present.
#include "agent/main/telemetry_metrics.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "agent/main/agent_metrics.h"
#include "agent/main/tracing_thread.h"
#include "agent/main/upload_security.h"
#include "common/http/server_stats.h"
#include "common/metrics/exposition.h"
#include "tests/support/promtool_check.h"
#include "tests/support/series_count.h"

#ifndef HOSTMESH_PROMTOOL_PATH
#define HOSTMESH_PROMTOOL_PATH ""
#endif

namespace hostmesh::agent::app {
namespace {

using telemetry::Carrier;
using telemetry::NicCounter;
using telemetry::NicReading;

std::vector<TelemetryNicLabels> Labels(std::size_t n) {
  std::vector<TelemetryNicLabels> labels;
  for (std::size_t i = 0; i < n; ++i) {
    labels.push_back(
        {"nic" + std::to_string(i), "eth" + std::to_string(i), "mlx5_" + std::to_string(i), 1});
  }
  return labels;
}

// Every counter, every priority and the PCIe link present: the worst case.
NicReading FullReading(std::uint64_t base) {
  NicReading r;
  for (std::size_t c = 0; c < telemetry::kNicCounterCount; ++c) r.counters[c] = base + c;
  for (std::size_t p = 0; p < telemetry::kPfcPriorities; ++p) {
    r.rx_pfc_pause[p] = 100 + p;
    r.tx_pfc_pause[p] = 200 + p;
  }
  r.port_state = 4;
  r.phys_state = 5;
  r.carrier = Carrier::kUp;
  r.pcie = telemetry::PcieLink{8, 16, 16000, 16000};
  return r;
}

TEST(telemetry_metrics, ValuesComeFromTheLatestReading) {
  metrics::Registry registry;
  TelemetryBoard board;
  std::vector<TelemetryNicLabels> labels = Labels(2);
  labels[1].device.clear();  // a NIC without RDMA device: no RDMA series
  RegisterTelemetryMetrics(registry, labels, {3}, board);

  NicReading a;
  a[NicCounter::kSymbolError] = 4210;
  a[NicCounter::kPortRcvDataBytes] = 4000;
  a[NicCounter::kRxFcsErrors] = 3980;
  a[NicCounter::kCarrierChanges] = 7;
  a[NicCounter::kAerCorrectable] = 2;
  a.rx_pfc_pause[3] = 11;
  a.tx_pfc_pause[3] = 12;
  a.tx_pfc_pause[4] = 99;  // not a configured priority
  a.port_state = 1;        // DOWN
  a.phys_state = 3;        // Disabled
  a.carrier = Carrier::kDown;
  a.pcie = telemetry::PcieLink{8, 16, 8000, 16000};
  NicReading b;
  b.carrier = Carrier::kUnknown;
  telemetry::TelemetryStats stats;
  stats.samples = 5;
  stats.failures[static_cast<std::size_t>(telemetry::Source::kEthtool)] = 3;
  board.Publish({a, b}, stats);

  const std::string text = metrics::RenderText(registry);
  for (const char* line : {
           "hostmesh_agent_infiniband_symbol_error_total{device=\"mlx5_0\",port=\"1\"} 4210",
           "hostmesh_agent_infiniband_port_data_received_bytes_total{device=\"mlx5_0\",port=\"1\"} "
           "4000",
           "hostmesh_agent_infiniband_state_id{device=\"mlx5_0\",port=\"1\"} 1",
           "hostmesh_agent_infiniband_physical_state_id{device=\"mlx5_0\",port=\"1\"} 3",
           "hostmesh_agent_ethtool_rx_fcs_errors_total{netdev=\"eth0\"} 3980",
           "hostmesh_agent_network_carrier_changes_total{netdev=\"eth0\"} 7",
           "hostmesh_agent_network_carrier{netdev=\"eth0\"} 0",
           "hostmesh_agent_ethtool_pause_frames_received_total{netdev=\"eth0\",priority=\"3\"} 11",
           "hostmesh_agent_ethtool_pause_frames_transmitted_total{netdev=\"eth0\",priority=\"3\"} "
           "12",
           "hostmesh_agent_pcie_current_link_width{nic=\"nic0\"} 8",
           "hostmesh_agent_pcie_max_link_width{nic=\"nic0\"} 16",
           "hostmesh_agent_pcie_current_link_transfers_per_second{nic=\"nic0\"} 8000000000",
           "hostmesh_agent_pcie_max_link_transfers_per_second{nic=\"nic0\"} 16000000000",
           "hostmesh_agent_pcie_aer_errors_total{nic=\"nic0\",severity=\"correctable\"} 2",
           "hostmesh_agent_nic_info{nic=\"nic1\",netdev=\"eth1\",device=\"\",port=\"\"} 1",
           "hostmesh_agent_telemetry_read_failures_total{source=\"ethtool\"} 3",
           "hostmesh_agent_telemetry_samples_total 5",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n--- in ---\n" << text;
  }
  // Counters the driver lacks have no series; neither do unlisted priorities,
  // nor RDMA series for a NIC without a device, nor an unknown carrier.
  EXPECT_EQ(text.find("link_downed_total{"), std::string::npos);
  EXPECT_EQ(text.find("priority=\"4\""), std::string::npos);
  EXPECT_EQ(text.find("device=\"\",port=\"1\""), std::string::npos);
  EXPECT_EQ(text.find("network_carrier{netdev=\"eth1\"}"), std::string::npos);
  EXPECT_EQ(text.find("pcie_current_link_width{nic=\"nic1\"}"), std::string::npos);
}

TEST(telemetry_metrics, BeforeTheFirstSampleOnlyInfoAndHealthSeries) {
  metrics::Registry registry;
  TelemetryBoard board;
  RegisterTelemetryMetrics(registry, Labels(2), {3}, board);
  const std::string text = metrics::RenderText(registry);
  EXPECT_EQ(text.find("infiniband_state_id{"), std::string::npos);
  EXPECT_NE(text.find("hostmesh_agent_nic_info{nic=\"nic0\""), std::string::npos);
  EXPECT_NE(text.find("hostmesh_agent_telemetry_samples_total 0"), std::string::npos);
}

// The whole agent's /metrics with 8 NICs, every telemetry value present.
struct WholeAgent {
  explicit WholeAgent(std::vector<std::uint32_t> priorities)
      : agent(registry, Names(), [] { return upload::UploadCounters{}; }) {
    LoopSnapshot s;
    const std::size_t n = 8;
    s.pairs.resize(n * n);
    s.prober.resize(n);
    s.receive_errors.assign(n, 0);
    s.clock_fit_error_seconds.assign(n, 0);
    s.distinct_ports.assign(n * n, 0);
    agent.SetTimestampSources(std::vector<TimestampSource>(n, TimestampSource::kKernel));
    // The verbs agent, whose NICs have the most series: rotation, async events, QP recoveries.
    agent.SetSourcePortRotations(std::vector<SourcePortRotation>(n, SourcePortRotation::kPerQp));
    RnicHealthStats health;
    health.async_events = {
        {"port_active", 0}, {"port_down", 0}, {"qp_fatal", 0}, {"device_fatal", 0}};
    s.rnic_health.assign(n, health);
    for (std::size_t i = 0; i < n; ++i) {
      ProbeResult r;
      r.src_nic = static_cast<NicId>(i);
      r.app_send_ns = 1;
      r.nic_send_ns = 2;
      r.nic_recv_ns = 3;
      r.app_recv_ns = 4;
      agent.ObserveResult(r);
    }
    agent.Publish(s);  // hands the results to the histograms
    RegisterTraceMetrics(registry, [] { return TraceStatus{}; });
    RegisterTelemetryMetrics(registry, Labels(n), std::move(priorities), board);
    std::vector<NicReading> readings;
    for (std::size_t i = 0; i < n; ++i) readings.push_back(FullReading(i * 100));
    board.Publish(readings, {});
    // TLS on both sides: the upload's files and the metrics server's.
    AnalyzerConfig analyzer;
    analyzer.tls = {"/etc/hostmesh/tls/agent.crt", "/etc/hostmesh/tls/agent.key",
                    "/etc/hostmesh/tls/ca.crt"};
    config::HttpServerConfig http_tls;
    http_tls.tls_cert = "/etc/hostmesh/tls/metrics.crt";
    http_tls.tls_key = "/etc/hostmesh/tls/metrics.key";
    http_tls.tls_client_ca = "/etc/hostmesh/tls/ca.crt";
    RegisterUploadSecurity(registry, analyzer, http_tls);
  }
  static std::vector<std::string> Names() {
    std::vector<std::string> names;
    for (int i = 0; i < 8; ++i) names.push_back("nic" + std::to_string(i));
    return names;
  }
  metrics::Registry registry;
  AgentMetrics agent;
  TelemetryBoard board;
  // The metrics server's own counters, as the agent declares them.
  http::ServerStats http{registry, http::ServerStats::Series::kOnFirstEvent};
};

TEST(telemetry_metrics, EightNicsWithEveryCounterStayUnderTheSeriesBudget) {
  metrics::Registry telemetry_only;
  TelemetryBoard board;
  RegisterTelemetryMetrics(telemetry_only, Labels(8), {3}, board);
  std::vector<NicReading> readings(8, FullReading(0));
  board.Publish(readings, {});
  const std::size_t telemetry_series = hostmesh::testing::CountSeries(telemetry_only.Collect());
  EXPECT_EQ(telemetry_series, 8 * 33 + 5U);  // the figure the header promises

  WholeAgent whole({3});
  const std::size_t total = hostmesh::testing::CountSeries(whole.registry.Collect());
  EXPECT_LT(total, 1000U) << "telemetry " << telemetry_series << "; by family:\n"
                          << hostmesh::testing::SeriesByFamily(whole.registry.Collect());
  std::printf("series with 8 NICs: telemetry %zu, whole agent %zu\n", telemetry_series, total);
}

TEST(telemetry_metrics, PromtoolAcceptsTheExposition) {
  if (std::string(HOSTMESH_PROMTOOL_PATH).empty()) {
    GTEST_SKIP() << "promtool not found at configure time (Debian package 'prometheus')";
  }
  WholeAgent whole({3});
  const std::string text = metrics::RenderText(whole.registry);
  const hostmesh::testing::PromtoolResult result =
      hostmesh::testing::PromtoolCheck(HOSTMESH_PROMTOOL_PATH, text);
  EXPECT_TRUE(result.ok) << result.output << "\n---\n" << text;
  EXPECT_EQ(result.output, "") << text;
}

}  // namespace
}  // namespace hostmesh::agent::app
