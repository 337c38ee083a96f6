#pragma once

// The agent's /metrics. The core keeps plain counters owned by the loop
// thread; the loop publishes a copy now and then (Publish) and the scrape
// callbacks read that copy, so nothing is counted twice and the hot path
// takes no lock per probe. Latency histograms are prometheus-cpp's, fed the
// same way: each result lands in a per-NIC array of bucket counts owned by
// the loop, and Publish hands those to the histograms in one ObserveMultiple
// per NIC (prometheus::Histogram::Observe takes a mutex and two
// compare-and-swap loops per call, about 180 instructions; this is an array
// increment).
//
// Cardinality (DESIGN 3, under 1,000 series with 8 NICs): counters per NIC
// pair (4 x 56), histograms per source NIC (2 x 8 x 16), the rest per NIC.

#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/core/prober.h"
#include "agent/core/tracker.h"
#include "agent/main/transport_stats.h"
#include "agent/upload/upload_engine.h"
#include "common/metrics/registry.h"

namespace hostmesh::agent::app {

struct LoopSnapshot {
  std::vector<PairCounters> pairs;              // [src * nics + dst]
  std::vector<ProberNicCounters> prober;        // per NIC
  std::vector<std::uint64_t> receive_errors;    // transport's, per NIC
  std::vector<double> clock_fit_error_seconds;  // per NIC; 0 where the host clock stamps
  std::vector<std::uint64_t> distinct_ports;    // [src * nics + dst], last hour
  // The verbs transport's per-NIC RNIC health (all absent under UDP).
  std::vector<std::optional<RnicHealthStats>> rnic_health;
  // The UDP transport's per-NIC error-queue messages (all absent under verbs).
  std::vector<std::optional<ErrorQueueStats>> error_queue;
  std::uint64_t pending = 0;  // probes not decided yet
};

// A row of the per-NIC metrics table (agent_metrics.cc).
struct NicRow;

class AgentMetrics {
 public:
  // `nic_names` in NicId order; `upload` is called from the scrape thread.
  AgentMetrics(metrics::Registry& registry, std::vector<std::string> nic_names,
               std::function<upload::UploadCounters()> upload);

  // Loop thread. Publish also hands the results observed since the last one
  // to the latency histograms.
  void Publish(LoopSnapshot snapshot);
  void ObserveResult(const ProbeResult& result);
  // What each NIC's transport delivers (from OpenNic); exported as a 0/1 gauge.
  void SetTimestampSources(const std::vector<TimestampSource>& sources);
  // How each NIC rotates its source ports (OpenResult::rotation); an info gauge.
  void SetSourcePortRotations(const std::vector<SourcePortRotation>& rotations);

  // Histogram bounds: 1 us .. 1 s, ~3.16x apart.
  static std::vector<double> LatencyBuckets();

 private:
  static std::vector<double> WithInfinity(std::vector<double> bounds) {
    bounds.push_back(std::numeric_limits<double>::infinity());
    return bounds;
  }
  LoopSnapshot Read() const;
  void AddPairCounter(metrics::Registry& registry, const char* name, const char* help,
                      std::uint64_t PairCounters::*field);
  // A family of the per-NIC table (agent_metrics.cc); `row` is static.
  void AddNicFamily(metrics::Registry& registry, const NicRow& row);
  void AddInfoFamilies(metrics::Registry& registry);

  std::vector<std::string> nics_;
  // Observations not yet handed to a histogram; loop thread only.
  struct Pending {
    prometheus::Histogram* histogram = nullptr;  // resolved once: no label lookups
    std::vector<double> counts;                  // per bucket, +Inf last
    double sum = 0;
    bool any = false;
  };
  void Observe(Pending& pending, double seconds);
  static void Flush(Pending& pending);

  const std::vector<double> buckets_ = LatencyBuckets();
  // buckets_ and +Inf last, so that Observe's scan needs no end check.
  const std::vector<double> scan_bounds_ = WithInfinity(buckets_);
  std::vector<Pending> latency_;     // per source NIC
  std::vector<Pending> processing_;  // per source NIC

  mutable std::mutex mu_;
  LoopSnapshot snapshot_;
  std::vector<TimestampSource> sources_;
  std::vector<SourcePortRotation> rotations_;
};

}  // namespace hostmesh::agent::app
