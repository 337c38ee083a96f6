#include "agent/main/agent_metrics.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "agent/core/probe_codec.h"
#include "common/base/proc_stats.h"
#include "common/metrics/buckets.h"

namespace hostmesh::agent::app {
namespace {

using metrics::MetricType;
using metrics::ScrapedValue;

constexpr std::array<std::pair<TimestampSource, std::string_view>, 3> kSources = {{
    {TimestampSource::kUser, "user"},
    {TimestampSource::kKernel, "kernel"},
    {TimestampSource::kHardware, "hardware"},
}};

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

  AddPairCounter(r, "hostmesh_agent_probes_sent_total", "Probes sent, by NIC pair.",
                 &PairCounters::sent);
  AddPairCounter(r, "hostmesh_agent_probes_received_total",
                 "Probes received before their timeout, by NIC pair.", &PairCounters::received);
  AddPairCounter(
      r, "hostmesh_agent_probes_timeouts_total",
      "Probes not received within the timeout (send failures not included), by NIC pair.",
      &PairCounters::timed_out);
  AddPairCounter(r, "hostmesh_agent_probes_late_total",
                 "Probes received after their timeout was reported, by NIC pair.",
                 &PairCounters::late);

  AddNicCounter(r, "hostmesh_agent_send_errors_total",
                "Probes the NIC failed to send (reported as send failures, not timeouts).",
                [](const LoopSnapshot& s, std::size_t i) {
                  return static_cast<double>(s.prober[i].send_errors);
                });
  AddNicCounter(r, "hostmesh_agent_send_retry_later_total",
                "Probes not sent because the transport's queue was full.",
                [](const LoopSnapshot& s, std::size_t i) {
                  return static_cast<double>(s.prober[i].send_retry_later);
                });
  AddNicCounter(r, "hostmesh_agent_receive_errors_total",
                "Receive errors reported by the transport on this NIC.",
                [](const LoopSnapshot& s, std::size_t i) {
                  return static_cast<double>(s.receive_errors[i]);
                });
  AddNicCounter(r, "hostmesh_agent_duplicate_probes_total",
                "Second receives of probes this NIC sent, dropped.",
                [](const LoopSnapshot& s, std::size_t i) {
                  double total = 0;
                  const std::size_t n = s.prober.size();
                  for (std::size_t d = 0; d < n; ++d)
                    total += static_cast<double>(s.pairs[i * n + d].duplicate);
                  return total;
                });

  r.AddCallbackFamily(
      MetricType::kCounter, "hostmesh_agent_rejected_packets_total",
      "Packets received on the NIC and dropped before matching, by reason; a (nic, reason) "
      "series appears with its first packet.",
      {"nic", "reason"}, [this] {
        const LoopSnapshot s = Read();
        std::vector<ScrapedValue> out;
        for (std::size_t i = 0; i < s.prober.size() && i < nics_.size(); ++i) {
          for (std::size_t k = 0; k < kDecodeStatusCount; ++k) {
            const auto status = static_cast<DecodeStatus>(k);
            // Neither is a rejection: a probe, or our tracer's last TTL.
            if (status == DecodeStatus::kOk || status == DecodeStatus::kTraceProbe) {
              continue;
            }
            // Five reasons per NIC, nearly always 0: 40 series of the budget
            // of 1,000 with 8 NICs (DESIGN 3), which TLS's series then broke.
            if (s.prober[i].received[k] == 0) continue;
            out.push_back({{nics_[i], std::string(DecodeStatusName(status))},
                           static_cast<double>(s.prober[i].received[k])});
          }
        }
        return out;
      });
  // Like source_port_rotation, one series per NIC with the source as a label
  // (an info metric): a 0/1 gauge per source spent 16 more series with 8 NICs,
  // the room rdma_port_up and rdma_reopens_total take.
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
  // One series per NIC with the mode as a label (an info metric): a 0/1
  // gauge per mode would spend 24 more series of the budget with 8 NICs.
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
  r.AddCallbackFamily(
      MetricType::kCounter, "hostmesh_agent_rdma_async_events_total",
      "Asynchronous events of the NIC's RDMA device (verbs transport), by kind.", {"nic", "event"},
      [this] {
        const LoopSnapshot s = Read();
        std::vector<ScrapedValue> out;
        for (std::size_t i = 0; i < s.rnic_health.size() && i < nics_.size(); ++i) {
          if (!s.rnic_health[i]) continue;
          for (const auto& [kind, count] : s.rnic_health[i]->async_events) {
            out.push_back({{nics_[i], std::string(kind)}, static_cast<double>(count)});
          }
        }
        return out;
      });
  r.AddCallbackFamily(
      MetricType::kCounter, "hostmesh_agent_qp_recoveries_total",
      "Queue pairs found in the error state and reset back to RTS, by outcome.", {"nic", "outcome"},
      [this] {
        const LoopSnapshot s = Read();
        std::vector<ScrapedValue> out;
        for (std::size_t i = 0; i < s.rnic_health.size() && i < nics_.size(); ++i) {
          if (!s.rnic_health[i]) continue;
          out.push_back({{nics_[i], "ok"}, static_cast<double>(s.rnic_health[i]->qp_recoveries)});
          out.push_back(
              {{nics_[i], "failed"}, static_cast<double>(s.rnic_health[i]->qp_recovery_failures)});
        }
        return out;
      });
  r.AddCallbackFamily(
      MetricType::kCounter, "hostmesh_agent_rdma_reopens_total",
      "Times the NIC's RDMA device was closed and opened again after a CQ or device error.",
      {"nic"}, [this] {
        const LoopSnapshot s = Read();
        std::vector<ScrapedValue> out;
        for (std::size_t i = 0; i < s.rnic_health.size() && i < nics_.size(); ++i) {
          if (s.rnic_health[i]) {
            out.push_back({{nics_[i]}, static_cast<double>(s.rnic_health[i]->reopens)});
          }
        }
        return out;
      });
  r.AddCallbackFamily(
      MetricType::kCounter, "hostmesh_agent_error_queue_messages_total",
      "UDP: messages on the probe sockets' error queues that are not send timestamps, by kind: "
      "icmp_error (ICMP errors for probes sent, such as a peer's port unreachable) or other "
      "(local errors, unknown messages).",
      {"nic", "kind"}, [this] {
        const LoopSnapshot s = Read();
        std::vector<ScrapedValue> out;
        for (std::size_t i = 0; i < s.error_queue.size() && i < nics_.size(); ++i) {
          if (!s.error_queue[i]) continue;
          out.push_back(
              {{nics_[i], "icmp_error"}, static_cast<double>(s.error_queue[i]->icmp_errors)});
          out.push_back({{nics_[i], "other"}, static_cast<double>(s.error_queue[i]->other)});
        }
        return out;
      });
  // Kept while the port is down (that is when it matters): 0, not absent.
  r.AddCallbackFamily(
      MetricType::kGauge, "hostmesh_agent_rdma_port_up",
      "1 while the agent probes from the NIC's RDMA port; 0 while probing from it is paused "
      "(port not active, or the device failed and is being reopened).",
      {"nic"}, [this] {
        const LoopSnapshot s = Read();
        std::vector<ScrapedValue> out;
        for (std::size_t i = 0; i < s.rnic_health.size() && i < nics_.size(); ++i) {
          if (s.rnic_health[i]) out.push_back({{nics_[i]}, s.rnic_health[i]->port_up ? 1.0 : 0.0});
        }
        return out;
      });
  r.AddCallbackFamily(MetricType::kGauge, "hostmesh_agent_clock_fit_error_seconds",
                      "Error bound of the NIC-clock-to-host-clock fit; 0 when the host clock "
                      "stamps (kernel UDP).",
                      {"nic"}, [this] {
                        const LoopSnapshot s = Read();
                        std::vector<ScrapedValue> out;
                        for (std::size_t i = 0; i < s.clock_fit_error_seconds.size(); ++i) {
                          out.push_back({{nics_[i]}, s.clock_fit_error_seconds[i]});
                        }
                        return out;
                      });
  // In place of port_pool_generation (rotations since start: a fixed schedule,
  // and whether rotation works shows in port_pool_distinct_ports per pair).
  r.AddCallbackFamily(
      MetricType::kCounter, "hostmesh_agent_receive_queue_empty_total",
      "Polls that found every receive the agent had posted on the NIC's QP used: probes "
      "arriving then were dropped by the NIC unseen and read as loss (verbs).",
      {"nic"}, [this] {
        const LoopSnapshot s = Read();
        std::vector<ScrapedValue> out;
        for (std::size_t i = 0; i < s.rnic_health.size() && i < nics_.size(); ++i) {
          if (s.rnic_health[i]) {
            out.push_back({{nics_[i]}, static_cast<double>(s.rnic_health[i]->receive_queue_empty)});
          }
        }
        return out;
      });
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

  // Upload: Uploader::Counters() takes the uploader's short lock.
  const auto up = [upload](std::uint64_t upload::UploadCounters::*field) {
    return [upload, field] { return static_cast<double>(upload().*field); };
  };
  r.AddCallbackGauge("hostmesh_agent_upload_queue_depth_batches",
                     "Batches held until the analyzer acknowledges them.",
                     up(&upload::UploadCounters::queue_depth));
  r.AddCallbackGauge("hostmesh_agent_upload_buffered_bytes", "Bytes of the batches held.",
                     up(&upload::UploadCounters::bytes_buffered));
  r.AddCallbackCounter("hostmesh_agent_upload_batches_sent_total",
                       "Batch writes to the analyzer, resends included.",
                       up(&upload::UploadCounters::batches_sent));
  r.AddCallbackCounter("hostmesh_agent_upload_batches_acknowledged_total",
                       "Batches the analyzer acknowledged as durable.",
                       up(&upload::UploadCounters::batches_acknowledged));
  r.AddCallbackCounter("hostmesh_agent_upload_batches_dropped_total",
                       "Batches dropped unacknowledged because the buffer budget was full.",
                       up(&upload::UploadCounters::batches_dropped));
  r.AddCallbackCounter("hostmesh_agent_upload_results_dropped_total",
                       "Probe results dropped with those batches.",
                       up(&upload::UploadCounters::results_dropped));
  r.AddCallbackCounter("hostmesh_agent_upload_protocol_errors_total",
                       "Acks or durable claims from the analyzer for batches this agent never "
                       "sent: believed for nothing.",
                       up(&upload::UploadCounters::protocol_errors));
  r.AddCallbackCounter("hostmesh_agent_upload_connects_total",
                       "Connections to the analyzer established.",
                       up(&upload::UploadCounters::connects));
  r.AddCallbackCounter("hostmesh_agent_upload_connect_failures_total",
                       "Failed attempts to connect to the analyzer.",
                       up(&upload::UploadCounters::connect_failures));

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

void AgentMetrics::AddNicCounter(metrics::Registry& r, const char* name, const char* help,
                                 std::function<double(const LoopSnapshot&, std::size_t)> value) {
  r.AddCallbackFamily(MetricType::kCounter, name, help, {"nic"}, [this, value] {
    const LoopSnapshot s = Read();
    std::vector<ScrapedValue> out;
    if (s.prober.size() != nics_.size() || s.receive_errors.size() != nics_.size()) return out;
    for (std::size_t i = 0; i < nics_.size(); ++i) out.push_back({{nics_[i]}, value(s, i)});
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
  // prometheus::Histogram::Observe's rule: the first bucket whose bound is >= v.
  const auto bucket = std::lower_bound(buckets_.begin(), buckets_.end(), seconds);
  pending.counts[static_cast<std::size_t>(bucket - buckets_.begin())] += 1;
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
