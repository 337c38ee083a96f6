#include "agent/main/telemetry_metrics.h"

#include <array>
#include <functional>
#include <string_view>
#include <utility>

namespace hostmesh::agent::app {
namespace {

using metrics::MetricType;
using metrics::ScrapedValue;
using telemetry::Carrier;
using telemetry::NicCounter;
using telemetry::NicReading;

enum class Scope { kRdma, kNetdev, kNic };

struct CounterFamily {
  NicCounter counter;
  Scope scope;
  const char* name;
  const char* help;
};

constexpr CounterFamily kCounterFamilies[] = {
    {NicCounter::kLinkDowned, Scope::kRdma, "hostmesh_agent_infiniband_link_downed_total",
     "Times the RDMA port's link failed error recovery and went down."},
    {NicCounter::kSymbolError, Scope::kRdma, "hostmesh_agent_infiniband_symbol_error_total",
     "Minor link errors detected on one or more physical lanes."},
    {NicCounter::kPortRcvErrors, Scope::kRdma,
     "hostmesh_agent_infiniband_port_errors_received_total",
     "Packets with errors received on the port."},
    {NicCounter::kPortXmitDiscards, Scope::kRdma,
     "hostmesh_agent_infiniband_port_discards_transmitted_total",
     "Outbound packets discarded by the port (port down or congestion)."},
    {NicCounter::kPortRcvDataBytes, Scope::kRdma,
     "hostmesh_agent_infiniband_port_data_received_bytes_total",
     "Data octets received on the port (sysfs port_rcv_data x 4)."},
    {NicCounter::kPortXmitDataBytes, Scope::kRdma,
     "hostmesh_agent_infiniband_port_data_transmitted_bytes_total",
     "Data octets transmitted on the port (sysfs port_xmit_data x 4)."},
    {NicCounter::kOutOfSequence, Scope::kRdma,
     "hostmesh_agent_infiniband_out_of_sequence_packets_received_total",
     "Out-of-sequence packets received (a sign of loss on the path)."},
    {NicCounter::kPacketSeqErr, Scope::kRdma,
     "hostmesh_agent_infiniband_packet_sequence_errors_total",
     "NAK sequence error packets received."},
    {NicCounter::kLocalAckTimeoutErr, Scope::kRdma,
     "hostmesh_agent_infiniband_local_ack_timeout_errors_total",
     "Ack timeouts on the sender that exhausted the retries."},
    {NicCounter::kNpCnpSent, Scope::kRdma, "hostmesh_agent_infiniband_np_cnp_sent_total",
     "Congestion notification packets sent (as notification point)."},
    {NicCounter::kRpCnpHandled, Scope::kRdma, "hostmesh_agent_infiniband_rp_cnp_handled_total",
     "Congestion notification packets handled (as reaction point)."},
    {NicCounter::kRnrNakRetryErr, Scope::kRdma,
     "hostmesh_agent_infiniband_rnr_nak_retry_errors_total",
     "Receiver-not-ready NAK retries exhausted."},
    {NicCounter::kPortRcvPackets, Scope::kRdma,
     "hostmesh_agent_infiniband_port_packets_received_total",
     "Packets received on the port (rxe: hw_counters/rcvd_pkts)."},
    {NicCounter::kPortXmitPackets, Scope::kRdma,
     "hostmesh_agent_infiniband_port_packets_transmitted_total",
     "Packets transmitted on the port (rxe: hw_counters/sent_pkts)."},
    {NicCounter::kCarrierChanges, Scope::kNetdev, "hostmesh_agent_network_carrier_changes_total",
     "Carrier changes of the netdev (sysfs carrier_changes)."},
    {NicCounter::kLinkDownEvents, Scope::kNetdev, "hostmesh_agent_ethtool_link_down_events_total",
     "Link-down events of the PHY (ethtool link_down_events_phy)."},
    {NicCounter::kRxDiscardsPhy, Scope::kNetdev, "hostmesh_agent_ethtool_rx_discards_phy_total",
     "Received packets discarded by the port for lack of buffer (ethtool rx_discards_phy)."},
    {NicCounter::kRxOutOfBuffer, Scope::kNetdev, "hostmesh_agent_ethtool_rx_out_of_buffer_total",
     "Received packets dropped for lack of receive descriptors (ethtool rx_out_of_buffer)."},
    {NicCounter::kRxSymbolErrors, Scope::kNetdev, "hostmesh_agent_ethtool_rx_symbol_errors_total",
     "PCS symbol errors not corrected by FEC (ethtool rx_pcs_symbol_err_phy)."},
    {NicCounter::kRxFcsErrors, Scope::kNetdev, "hostmesh_agent_ethtool_rx_fcs_errors_total",
     "Received frames with a bad FCS/CRC (ethtool rx_crc_errors_phy and kin)."},
};

constexpr std::array<std::pair<NicCounter, std::string_view>, 3> kAerSeverities = {{
    {NicCounter::kAerCorrectable, "correctable"},
    {NicCounter::kAerNonfatal, "nonfatal"},
    {NicCounter::kAerFatal, "fatal"},
}};

std::vector<std::string> LabelNames(Scope scope) {
  switch (scope) {
    case Scope::kRdma:
      return {"device", "port"};
    case Scope::kNetdev:
      return {"netdev"};
    case Scope::kNic:
      break;
  }
  return {"nic"};
}

// The label values of NIC `n` in `scope`, or empty when it has none there.
std::vector<std::string> LabelValues(const TelemetryNicLabels& n, Scope scope) {
  switch (scope) {
    case Scope::kRdma:
      if (n.device.empty()) return {};
      return {n.device, std::to_string(n.port)};
    case Scope::kNetdev:
      if (n.netdev.empty()) return {};
      return {n.netdev};
    case Scope::kNic:
      break;
  }
  return {n.nic};
}

using Values = std::function<void(const NicReading&, const std::vector<std::string>& labels,
                                  std::vector<ScrapedValue>&)>;

// A family with one or more series per NIC that has `scope` labels. The label
// values are built once here; a scrape only copies them.
void AddFamily(metrics::Registry& r, MetricType type, const char* name, const char* help,
               Scope scope, std::vector<std::string> extra_labels,
               const std::vector<TelemetryNicLabels>& nics, const TelemetryBoard& board,
               Values values) {
  std::vector<std::string> label_names = LabelNames(scope);
  for (std::string& l : extra_labels) label_names.push_back(std::move(l));
  std::vector<std::vector<std::string>> per_nic;
  for (const TelemetryNicLabels& n : nics) per_nic.push_back(LabelValues(n, scope));
  r.AddCallbackFamily(type, name, help, std::move(label_names),
                      [per_nic = std::move(per_nic), &board, values = std::move(values)] {
                        const TelemetryView view = board.Read();
                        std::vector<ScrapedValue> out;
                        for (std::size_t i = 0; i < view.readings.size() && i < per_nic.size();
                             ++i) {
                          if (per_nic[i].empty()) continue;
                          values(view.readings[i], per_nic[i], out);
                        }
                        return out;
                      });
}

void Push(std::vector<ScrapedValue>& out, std::vector<std::string> labels, double value) {
  out.push_back({std::move(labels), value});
}

// The labels of a series with one more label value (priority, severity).
std::vector<std::string> With(const std::vector<std::string>& labels, std::string value) {
  std::vector<std::string> out = labels;
  out.push_back(std::move(value));
  return out;
}

}  // namespace

void TelemetryBoard::Publish(std::vector<telemetry::NicReading> readings,
                             telemetry::TelemetryStats stats) {
  std::lock_guard lock(mu_);
  view_.readings = std::move(readings);
  view_.stats = stats;
}

TelemetryView TelemetryBoard::Read() const {
  std::lock_guard lock(mu_);
  return view_;
}

namespace {

using Nics = std::vector<TelemetryNicLabels>;

// Kept while the port is down (value 1: DOWN) and 0 when it cannot be read,
// so an alert on state != 4 never loses its series.
void AddLinkStateFamilies(metrics::Registry& r, const Nics& nics, const TelemetryBoard& board) {
  AddFamily(r, MetricType::kGauge, "hostmesh_agent_infiniband_state_id",
            "RDMA port state as sysfs numbers it (1 down, 2 init, 3 armed, 4 active); 0 unknown.",
            Scope::kRdma, {}, nics, board,
            [](const NicReading& reading, const std::vector<std::string>& labels,
               std::vector<ScrapedValue>& out) { Push(out, labels, reading.port_state); });
  AddFamily(r, MetricType::kGauge, "hostmesh_agent_infiniband_physical_state_id",
            "RDMA port physical state as sysfs numbers it (3 disabled, 5 link up); 0 unknown.",
            Scope::kRdma, {}, nics, board,
            [](const NicReading& reading, const std::vector<std::string>& labels,
               std::vector<ScrapedValue>& out) { Push(out, labels, reading.phys_state); });
  AddFamily(r, MetricType::kGauge, "hostmesh_agent_network_carrier",
            "1 while the netdev's operational state is up, 0 while down.", Scope::kNetdev, {}, nics,
            board,
            [](const NicReading& reading, const std::vector<std::string>& labels,
               std::vector<ScrapedValue>& out) {
              if (reading.carrier == Carrier::kUnknown) return;
              Push(out, labels, reading.carrier == Carrier::kUp ? 1 : 0);
            });
}

void AddPauseFamilies(metrics::Registry& r, const Nics& nics, const TelemetryBoard& board,
                      const std::vector<std::uint32_t>& pause_priorities) {
  std::vector<std::pair<std::uint32_t, std::string>> priorities;
  for (std::uint32_t p : pause_priorities) {
    if (p < telemetry::kPfcPriorities) priorities.emplace_back(p, std::to_string(p));
  }
  const auto pause = [&](const char* name, const char* help, bool rx) {
    AddFamily(r, MetricType::kCounter, name, help, Scope::kNetdev, {"priority"}, nics, board,
              [priorities, rx](const NicReading& reading, const std::vector<std::string>& labels,
                               std::vector<ScrapedValue>& out) {
                const auto& counters = rx ? reading.rx_pfc_pause : reading.tx_pfc_pause;
                for (const auto& [p, priority] : priorities) {
                  if (counters[p])
                    Push(out, With(labels, priority), static_cast<double>(*counters[p]));
                }
              });
  };
  pause("hostmesh_agent_ethtool_pause_frames_received_total",
        "PFC pause frames received, by priority (telemetry.pause_priorities).", true);
  pause("hostmesh_agent_ethtool_pause_frames_transmitted_total",
        "PFC pause frames sent, by priority: the NIC could not drain its receive buffer.", false);
}

void AddPcieFamilies(metrics::Registry& r, const Nics& nics, const TelemetryBoard& board) {
  const auto pcie = [&](const char* name, const char* help,
                        std::uint32_t telemetry::PcieLink::*field, double scale) {
    AddFamily(r, MetricType::kGauge, name, help, Scope::kNic, {}, nics, board,
              [field, scale](const NicReading& reading, const std::vector<std::string>& labels,
                             std::vector<ScrapedValue>& out) {
                if (reading.pcie) {
                  Push(out, labels, static_cast<double>((*reading.pcie).*field) * scale);
                }
              });
  };
  pcie("hostmesh_agent_pcie_current_link_width", "Lanes the NIC's PCIe link runs with now.",
       &telemetry::PcieLink::current_width, 1);
  pcie("hostmesh_agent_pcie_max_link_width", "Lanes the NIC's PCIe link supports.",
       &telemetry::PcieLink::max_width, 1);
  pcie("hostmesh_agent_pcie_current_link_transfers_per_second",
       "Speed the NIC's PCIe link runs at now, in transfers per second per lane.",
       &telemetry::PcieLink::current_speed_mts, 1e6);
  pcie("hostmesh_agent_pcie_max_link_transfers_per_second",
       "Speed the NIC's PCIe link supports, in transfers per second per lane.",
       &telemetry::PcieLink::max_speed_mts, 1e6);
  AddFamily(r, MetricType::kCounter, "hostmesh_agent_pcie_aer_errors_total",
            "PCIe errors reported by AER on the NIC's PCI function, by severity.", Scope::kNic,
            {"severity"}, nics, board,
            [](const NicReading& reading, const std::vector<std::string>& labels,
               std::vector<ScrapedValue>& out) {
              for (const auto& [counter, severity] : kAerSeverities) {
                if (const auto& v = reading[counter]) {
                  Push(out, With(labels, std::string(severity)), static_cast<double>(*v));
                }
              }
            });
}

// The NICs' names (to join telemetry with probe series) and the sampler's own health.
void AddInfoAndHealth(metrics::Registry& r, const Nics& nics, const TelemetryBoard& board) {
  std::vector<ScrapedValue> info;
  for (const TelemetryNicLabels& n : nics) {
    info.push_back(
        {{n.nic, n.netdev, n.device, n.device.empty() ? "" : std::to_string(n.port)}, 1});
  }
  r.AddCallbackFamily(MetricType::kGauge, "hostmesh_agent_nic_info",
                      "1 per NIC: its netdev and RDMA device and port (empty when not "
                      "configured), to join telemetry series with the probe series.",
                      {"nic", "netdev", "device", "port"},
                      [info = std::move(info)] { return info; });
  r.AddCallbackFamily(
      MetricType::kCounter, "hostmesh_agent_telemetry_read_failures_total",
      "NIC values that could not be read (missing device, unreadable file, "
      "ethtool error), by source; each failure backs the value off.",
      {"source"}, [&board] {
        const TelemetryView view = board.Read();
        std::vector<ScrapedValue> out;
        for (std::size_t s = 0; s < telemetry::kSourceCount; ++s) {
          out.push_back({{std::string(telemetry::SourceName(static_cast<telemetry::Source>(s)))},
                         static_cast<double>(view.stats.failures[s])});
        }
        return out;
      });
  r.AddCallbackCounter("hostmesh_agent_telemetry_samples_total",
                       "Reads of every NIC's counters (one per telemetry.period).",
                       [&board] { return static_cast<double>(board.Read().stats.samples); });
}

// Values whose reads failed wait out a back-off (telemetry_collector.h).
// Both series appear with the first failed read, so a healthy agent spends
// none of its series budget on them.
void AddBackoffFamilies(metrics::Registry& r, const TelemetryBoard& board) {
  using Field = std::uint64_t telemetry::TelemetryStats::*;
  const auto family = [&](MetricType type, const char* name, const char* help, Field field) {
    r.AddCallbackFamily(type, name, help, {}, [&board, field] {
      const TelemetryView view = board.Read();
      std::vector<ScrapedValue> out;
      bool failed = false;
      for (std::uint64_t f : view.stats.failures) failed = failed || f > 0;
      if (failed) out.push_back({{}, static_cast<double>(view.stats.*field)});
      return out;
    });
  };
  family(MetricType::kGauge, "hostmesh_agent_telemetry_backed_off_values",
         "NIC values (counter files, devices, ethtool statistics) whose last read failed, not "
         "read again until their back-off expires (a period, doubling up to an hour).",
         &telemetry::TelemetryStats::backed_off);
  family(MetricType::kCounter, "hostmesh_agent_telemetry_skipped_reads_total",
         "Reads of NIC values held back because their back-off after a failed read had not "
         "expired.",
         &telemetry::TelemetryStats::skipped_reads);
}

}  // namespace

void RegisterTelemetryMetrics(metrics::Registry& r, std::vector<TelemetryNicLabels> nics,
                              std::vector<std::uint32_t> pause_priorities,
                              const TelemetryBoard& board) {
  for (const CounterFamily& f : kCounterFamilies) {
    AddFamily(
        r, MetricType::kCounter, f.name, f.help, f.scope, {}, nics, board,
        [counter = f.counter](const NicReading& reading, const std::vector<std::string>& labels,
                              std::vector<ScrapedValue>& out) {
          if (const auto& v = reading[counter]) Push(out, labels, static_cast<double>(*v));
        });
  }
  AddLinkStateFamilies(r, nics, board);
  AddPauseFamilies(r, nics, board, pause_priorities);
  AddPcieFamilies(r, nics, board);
  AddInfoAndHealth(r, nics, board);
  AddBackoffFamilies(r, board);
}

}  // namespace hostmesh::agent::app
