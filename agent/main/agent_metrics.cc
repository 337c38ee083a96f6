#include "agent/main/agent_metrics.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "agent/core/probe_codec.h"
#include "common/base/proc_stats.h"
#include "common/metrics/buckets.h"

namespace hostmesh::agent::app {

// A family with one series per NIC (or per NIC and kind), read from the
// loop's snapshot. `read` appends NIC i's series as (kind, value); the kind is
// the second label's value, ignored when `kind_label` is null. A NIC with no
// series (a UDP NIC's RDMA health, a verbs NIC's error queue) appends none.
using KindValues = std::vector<std::pair<std::string, double>>;
struct NicRow {
  metrics::MetricType type;
  const char* name;
  const char* help;
  const char* kind_label;
  void (*read)(const LoopSnapshot& s, std::size_t nic, KindValues& out);
};

namespace {

using metrics::MetricType;
using metrics::ScrapedValue;

constexpr std::array<std::pair<TimestampSource, std::string_view>, 3> kSources = {{
    {TimestampSource::kUser, "user"},
    {TimestampSource::kKernel, "kernel"},
    {TimestampSource::kHardware, "hardware"},
}};

template <typename T>
double Number(T n) {
  return static_cast<double>(n);
}

const RnicHealthStats* Health(const LoopSnapshot& s, std::size_t i) {
  return i < s.rnic_health.size() && s.rnic_health[i] ? &*s.rnic_health[i] : nullptr;
}

constexpr MetricType kCounter = MetricType::kCounter;
constexpr MetricType kGauge = MetricType::kGauge;

constexpr NicRow kNicRows[] = {
    {kCounter, "hostmesh_agent_send_errors_total",
     "Probes the NIC failed to send (reported as send failures, not timeouts).", nullptr,
     [](const LoopSnapshot& s, std::size_t i, KindValues& out) {
       if (i < s.prober.size()) out.emplace_back("", Number(s.prober[i].send_errors));
     }},
    {kCounter, "hostmesh_agent_send_retry_later_total",
     "Probes not sent because the transport's queue was full.", nullptr,
     [](const LoopSnapshot& s, std::size_t i, KindValues& out) {
       if (i < s.prober.size()) out.emplace_back("", Number(s.prober[i].send_retry_later));
     }},
    {kCounter, "hostmesh_agent_receive_errors_total",
     "Receive errors reported by the transport on this NIC.", nullptr,
     [](const LoopSnapshot& s, std::size_t i, KindValues& out) {
       if (i < s.receive_errors.size()) out.emplace_back("", Number(s.receive_errors[i]));
     }},
    {kCounter, "hostmesh_agent_duplicate_probes_total",
     "Second receives of probes this NIC sent, dropped.", nullptr,
     [](const LoopSnapshot& s, std::size_t i, KindValues& out) {
       const std::size_t n = s.prober.size();
       if (i >= n || s.pairs.size() != n * n) return;
       double total = 0;
       for (std::size_t d = 0; d < n; ++d) total += Number(s.pairs[i * n + d].duplicate);
       out.emplace_back("", total);
     }},
    // A (nic, reason) series appears with its first packet: five reasons per
    // NIC, nearly always 0, would be 40 series of the budget of 1,000 with 8
    // NICs (DESIGN 3).
    {kCounter, "hostmesh_agent_rejected_packets_total",
     "Packets received on the NIC and dropped before matching, by reason; a (nic, reason) "
     "series appears with its first packet.",
     "reason",
     [](const LoopSnapshot& s, std::size_t i, KindValues& out) {
       if (i >= s.prober.size()) return;
       for (std::size_t k = 0; k < kDecodeStatusCount; ++k) {
         const auto status = static_cast<DecodeStatus>(k);
         // Neither is a rejection: a probe, or our tracer's last TTL.
         if (status == DecodeStatus::kOk || status == DecodeStatus::kTraceProbe) continue;
         if (s.prober[i].received[k] == 0) continue;
         out.emplace_back(DecodeStatusName(status), Number(s.prober[i].received[k]));
       }
     }},
    {kCounter, "hostmesh_agent_rdma_async_events_total",
     "Asynchronous events of the NIC's RDMA device (verbs transport), by kind.", "event",
     [](const LoopSnapshot& s, std::size_t i, KindValues& out) {
       if (const RnicHealthStats* h = Health(s, i)) {
         for (const auto& [kind, count] : h->async_events) out.emplace_back(kind, Number(count));
       }
     }},
    {kCounter, "hostmesh_agent_qp_recoveries_total",
     "Queue pairs found in the error state and reset back to RTS, by outcome.", "outcome",
     [](const LoopSnapshot& s, std::size_t i, KindValues& out) {
       if (const RnicHealthStats* h = Health(s, i)) {
         out.emplace_back("ok", Number(h->qp_recoveries));
         out.emplace_back("failed", Number(h->qp_recovery_failures));
       }
     }},
    {kCounter, "hostmesh_agent_rdma_reopens_total",
     "Times the NIC's RDMA device was closed and opened again after a CQ or device error.", nullptr,
     [](const LoopSnapshot& s, std::size_t i, KindValues& out) {
       if (const RnicHealthStats* h = Health(s, i)) out.emplace_back("", Number(h->reopens));
     }},
    {kCounter, "hostmesh_agent_error_queue_messages_total",
     "UDP: messages on the probe sockets' error queues that are not send timestamps, by kind: "
     "icmp_error (ICMP errors for probes sent, such as a peer's port unreachable) or other "
     "(local errors, unknown messages).",
     "kind",
     [](const LoopSnapshot& s, std::size_t i, KindValues& out) {
       if (i >= s.error_queue.size() || !s.error_queue[i]) return;
       out.emplace_back("icmp_error", Number(s.error_queue[i]->icmp_errors));
       out.emplace_back("other", Number(s.error_queue[i]->other));
     }},
    // Kept while the port is down (that is when it matters): 0, not absent.
    {kGauge, "hostmesh_agent_rdma_port_up",
     "1 while the agent probes from the NIC's RDMA port; 0 while probing from it is paused "
     "(port not active, or the device failed and is being reopened).",
     nullptr,
     [](const LoopSnapshot& s, std::size_t i, KindValues& out) {
       if (const RnicHealthStats* h = Health(s, i)) out.emplace_back("", h->port_up ? 1.0 : 0.0);
     }},
    {kGauge, "hostmesh_agent_clock_fit_error_seconds",
     "Error bound of the NIC-clock-to-host-clock fit; 0 when the host clock stamps (kernel "
     "UDP).",
     nullptr,
     [](const LoopSnapshot& s, std::size_t i, KindValues& out) {
       if (i < s.clock_fit_error_seconds.size()) out.emplace_back("", s.clock_fit_error_seconds[i]);
     }},
    // In place of port_pool_generation (rotations since start: a fixed schedule,
    // and whether rotation works shows in port_pool_distinct_ports per pair).
    {kCounter, "hostmesh_agent_receive_queue_empty_total",
     "Polls that found every receive the agent had posted on the NIC's QP used: probes "
     "arriving then were dropped by the NIC unseen and read as loss (verbs).",
     nullptr,
     [](const LoopSnapshot& s, std::size_t i, KindValues& out) {
       if (const RnicHealthStats* h = Health(s, i)) {
         out.emplace_back("", Number(h->receive_queue_empty));
       }
     }},
};

struct PairRow {
  const char* name;
  const char* help;
  std::uint64_t PairCounters::*field;
};
constexpr PairRow kPairRows[] = {
    {"hostmesh_agent_probes_sent_total", "Probes sent, by NIC pair.", &PairCounters::sent},
    {"hostmesh_agent_probes_received_total", "Probes received before their timeout, by NIC pair.",
     &PairCounters::received},
    {"hostmesh_agent_probes_timeouts_total",
     "Probes not received within the timeout (send failures not included), by NIC pair.",
     &PairCounters::timed_out},
    {"hostmesh_agent_probes_late_total",
     "Probes received after their timeout was reported, by NIC pair.", &PairCounters::late},
};

// The uploader's counters (Uploader::Counters() takes its short lock).
struct UploadRow {
  MetricType type;
  const char* name;
  const char* help;
  std::uint64_t upload::UploadCounters::*field;
};
constexpr UploadRow kUploadRows[] = {
    {kGauge, "hostmesh_agent_upload_queue_depth_batches",
     "Batches held until the analyzer acknowledges them.", &upload::UploadCounters::queue_depth},
    {kGauge, "hostmesh_agent_upload_buffered_bytes", "Bytes of the batches held.",
     &upload::UploadCounters::bytes_buffered},
    {kCounter, "hostmesh_agent_upload_batches_sent_total",
     "Batch writes to the analyzer, resends included.", &upload::UploadCounters::batches_sent},
    {kCounter, "hostmesh_agent_upload_batches_acknowledged_total",
     "Batches the analyzer acknowledged as durable.",
     &upload::UploadCounters::batches_acknowledged},
    {kCounter, "hostmesh_agent_upload_batches_dropped_total",
     "Batches dropped unacknowledged because the buffer budget was full.",
     &upload::UploadCounters::batches_dropped},
    {kCounter, "hostmesh_agent_upload_results_dropped_total",
     "Probe results dropped with those batches.", &upload::UploadCounters::results_dropped},
    {kCounter, "hostmesh_agent_upload_protocol_errors_total",
     "Acks or durable claims from the analyzer for batches this agent never sent: believed "
     "for nothing.",
     &upload::UploadCounters::protocol_errors},
    {kCounter, "hostmesh_agent_upload_connects_total", "Connections to the analyzer established.",
     &upload::UploadCounters::connects},
    {kCounter, "hostmesh_agent_upload_connect_failures_total",
     "Failed attempts to connect to the analyzer.", &upload::UploadCounters::connect_failures},
    {kCounter, "hostmesh_agent_upload_batches_sent_as_rows_total",
     "Batches written with their results as one message each, for an analyzer that predates "
     "packed probe results (HelloReply.packed_results_format).",
     &upload::UploadCounters::batches_sent_as_rows},
};

}  // namespace

std::vector<double> AgentMetrics::LatencyBuckets() {
  return metrics::ExponentialBucketsRange(1e-6, 1, 13);
}

AgentMetrics::AgentMetrics(metrics::Registry& r, std::vector<std::string> nic_names,
                           std::function<upload::UploadCounters()> upload)
    : nics_(std::move(nic_names)) {
  auto& latency = r.AddHistogramFamily(
      "hostmesh_agent_network_latency_seconds",
      "One-way network latency of received probes, NIC receive minus NIC send timestamp, by "
      "sending NIC.");
  auto& processing = r.AddHistogramFamily(
      "hostmesh_agent_processing_delay_seconds",
      "End-host processing delay of received probes: application round minus network latency, "
      "by sending NIC.");
  for (const std::string& nic : nics_) {
    latency_.push_back(
        {&latency.Add({{"src_nic", nic}}, buckets_), std::vector<double>(buckets_.size() + 1)});
    processing_.push_back(
        {&processing.Add({{"src_nic", nic}}, buckets_), std::vector<double>(buckets_.size() + 1)});
  }
  for (const PairRow& row : kPairRows) AddPairCounter(r, row.name, row.help, row.field);
  for (const NicRow& row : kNicRows) AddNicFamily(r, row);
  AddInfoFamilies(r);
  r.AddCallbackFamily(
      MetricType::kGauge, "hostmesh_agent_port_pool_distinct_ports",
      "Distinct source ports a NIC pair probed with in the last hour.", {"src_nic", "dst_nic"},
      [this] {
        const LoopSnapshot s = Read();
        const std::size_t n = nics_.size();
        std::vector<ScrapedValue> out;
        if (s.distinct_ports.size() != n * n) return out;
        for (std::size_t a = 0; a < n; ++a) {
          for (std::size_t b = 0; b < n; ++b) {
            if (a == b) continue;
            out.push_back({{nics_[a], nics_[b]}, static_cast<double>(s.distinct_ports[a * n + b])});
          }
        }
        return out;
      });
  r.AddCallbackGauge("hostmesh_agent_probes_pending", "Probes sent and not decided yet.",
                     [this] { return static_cast<double>(Read().pending); });
  for (const UploadRow& row : kUploadRows) {
    auto value = [upload, field = row.field] { return static_cast<double>(upload().*field); };
    row.type == MetricType::kCounter ? r.AddCallbackCounter(row.name, row.help, value)
                                     : r.AddCallbackGauge(row.name, row.help, value);
  }
  r.AddCallbackCounter("hostmesh_agent_process_cpu_seconds_total",
                       "User and system CPU time of the agent process.", [] {
                         const auto stats = ReadSelfProcStats();
                         return stats ? stats->cpu_seconds : 0.0;
                       });
  r.AddCallbackGauge("hostmesh_agent_process_resident_memory_bytes",
                     "Resident set size of the agent process.", [] {
                       const auto stats = ReadSelfProcStats();
                       return stats ? stats->resident_bytes : 0.0;
                     });
}

// Info metrics: one series per NIC with the state as a label, always 1 (a 0/1
// gauge per value would spend 16 to 24 more series of the budget with 8 NICs,
// the room rdma_port_up and rdma_reopens_total take).
void AgentMetrics::AddInfoFamilies(metrics::Registry& r) {
  r.AddCallbackFamily(
      MetricType::kGauge, "hostmesh_agent_timestamp_source",
      "The timestamp source the NIC's transport delivers, in label source (user, kernel, "
      "hardware); always 1. No series for a NIC that did not open.",
      {"nic", "source"}, [this] {
        std::lock_guard lock(mu_);
        std::vector<ScrapedValue> out;
        for (std::size_t i = 0; i < sources_.size() && i < nics_.size(); ++i) {
          for (const auto& [source, name] : kSources) {
            if (sources_[i] == source) out.push_back({{nics_[i], std::string(name)}, 1.0});
          }
        }
        return out;
      });
  r.AddCallbackFamily(
      MetricType::kGauge, "hostmesh_agent_source_port_rotation",
      "The way the NIC rotates its probes' UDP source port, in label mode (socket: kernel UDP; "
      "flow_label: RoCEv2 port from the address handle's flow label; per_qp: a send QP per port, "
      "where the device fixes it per QP, e.g. soft-RoCE; fixed: one port, no rotation); always 1.",
      {"nic", "mode"}, [this] {
        std::lock_guard lock(mu_);
        std::vector<ScrapedValue> out;
        for (std::size_t i = 0; i < rotations_.size() && i < nics_.size(); ++i) {
          out.push_back({{nics_[i], SourcePortRotationName(rotations_[i])}, 1.0});
        }
        return out;
      });
}

void AgentMetrics::AddNicFamily(metrics::Registry& r, const NicRow& row) {
  std::vector<std::string> labels = {"nic"};
  if (row.kind_label != nullptr) labels.emplace_back(row.kind_label);
  r.AddCallbackFamily(row.type, row.name, row.help, std::move(labels), [this, &row] {
    const LoopSnapshot s = Read();
    std::vector<ScrapedValue> out;
    KindValues values;
    for (std::size_t i = 0; i < nics_.size(); ++i) {
      values.clear();
      row.read(s, i, values);
      for (auto& [kind, value] : values) {
        ScrapedValue series{{nics_[i]}, value};
        if (row.kind_label != nullptr) series.label_values.push_back(std::move(kind));
        out.push_back(std::move(series));
      }
    }
    return out;
  });
}

void AgentMetrics::AddPairCounter(metrics::Registry& r, const char* name, const char* help,
                                  std::uint64_t PairCounters::*field) {
  r.AddCallbackFamily(MetricType::kCounter, name, help, {"src_nic", "dst_nic"}, [this, field] {
    const LoopSnapshot s = Read();
    const std::size_t n = nics_.size();
    std::vector<ScrapedValue> out;
    if (s.pairs.size() != n * n) return out;
    for (std::size_t a = 0; a < n; ++a) {
      for (std::size_t b = 0; b < n; ++b) {
        if (a != b)
          out.push_back({{nics_[a], nics_[b]}, static_cast<double>(s.pairs[a * n + b].*field)});
      }
    }
    return out;
  });
}

void AgentMetrics::Publish(LoopSnapshot snapshot) {
  for (Pending& pending : latency_) Flush(pending);
  for (Pending& pending : processing_) Flush(pending);
  std::lock_guard lock(mu_);
  snapshot_ = std::move(snapshot);
}

void AgentMetrics::Observe(Pending& pending, double seconds) {
  // prometheus::Histogram::Observe's rule: the first bucket whose bound is >=
  // v. Probes land in the lowest few of the 13 bounds (1 us, 3.2 us, 10 us,
  // ...): a scan from the bottom finds them in fewer steps than a binary search.
  std::size_t bucket = 0;
  while (scan_bounds_[bucket] < seconds) ++bucket;
  pending.counts[bucket] += 1;
  pending.sum += seconds;
  pending.any = true;
}

void AgentMetrics::Flush(Pending& pending) {
  if (!pending.any) return;
  pending.histogram->ObserveMultiple(pending.counts, pending.sum);
  std::fill(pending.counts.begin(), pending.counts.end(), 0.0);
  pending.sum = 0;
  pending.any = false;
}

LoopSnapshot AgentMetrics::Read() const {
  std::lock_guard lock(mu_);
  return snapshot_;
}

void AgentMetrics::ObserveResult(const ProbeResult& result) {
  if (result.src_nic >= latency_.size()) return;
  double seconds = 0;
  if (NetworkLatencySeconds(result, &seconds)) Observe(latency_[result.src_nic], seconds);
  if (ProcessingDelaySeconds(result, &seconds)) Observe(processing_[result.src_nic], seconds);
}

void AgentMetrics::SetTimestampSources(const std::vector<TimestampSource>& sources) {
  std::lock_guard lock(mu_);
  sources_ = sources;
}

void AgentMetrics::SetSourcePortRotations(const std::vector<SourcePortRotation>& rotations) {
  std::lock_guard lock(mu_);
  rotations_ = rotations;
}

}  // namespace hostmesh::agent::app
