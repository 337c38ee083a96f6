#pragma once

// The NIC telemetry families of the agent's /metrics, read at scrape time
// from the latest sample on a TelemetryBoard. Names follow node_exporter's
// infiniband, ethtool, netdev and pcidevice collectors under the
// hostmesh_agent_ prefix; counters are the raw cumulative values (bytes,
// not 4-byte words), so rate() works across agent restarts. They are
// callback families of the registry (metrics::Registry::AddCallbackFamily):
// the label values are built once at registration, and the telemetry thread
// only publishes readings, never touching the registry.
//
// Labels: RDMA series {device, port}, netdev and ethtool series {netdev}
// (pause frames also {priority}), PCIe series {nic}; hostmesh_agent_nic_info
// joins the three. A counter the driver lacks has no series; the port state
// gauges exist for every RDMA NIC, 0 while the state cannot be read.
//
// Cardinality with 8 NICs and pause_priorities [3]: at most 33 series per
// NIC plus 5 (tests/agent/main/telemetry_metrics_test.cc counts them), and 2
// more (the back-off gauge and counter) once a read has failed.

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "agent/telemetry/nic_reading.h"
#include "agent/telemetry/telemetry_collector.h"
#include "common/metrics/registry.h"

namespace hostmesh::agent::app {

struct TelemetryNicLabels {
  std::string nic;     // the agent's NIC name
  std::string netdev;  // empty: no netdev series
  std::string device;  // RDMA device; empty: no RDMA series
  std::uint32_t port = 1;
};

struct TelemetryView {
  std::vector<telemetry::NicReading> readings;  // per NIC; empty before the first sample
  telemetry::TelemetryStats stats;
};

// The telemetry thread publishes, the scrape thread reads.
class TelemetryBoard {
 public:
  void Publish(std::vector<telemetry::NicReading> readings, telemetry::TelemetryStats stats);
  TelemetryView Read() const;

 private:
  mutable std::mutex mu_;
  TelemetryView view_;
};

void RegisterTelemetryMetrics(metrics::Registry& registry, std::vector<TelemetryNicLabels> nics,
                              std::vector<std::uint32_t> pause_priorities,
                              const TelemetryBoard& board);

}  // namespace hostmesh::agent::app
