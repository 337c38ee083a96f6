#include "agent/main/recorder_metrics.h"

#include <string>
#include <vector>

namespace hostmesh::agent::app {

using metrics::MetricType;
using metrics::ScrapedValue;

void RegisterRecorderMetrics(metrics::Registry& r, const recorder::FlightRecorder& rec,
                             const recorder::CaptureDesk& desk,
                             const std::atomic<std::uint64_t>& local_captures,
                             const std::atomic<std::uint64_t>& local_capture_failures) {
  using recorder::RingCounters;
  const auto ring = [&r, &rec](MetricType type, const char* name, const char* help,
                               std::uint64_t RingCounters::*field) {
    auto value = [&rec, field] { return static_cast<double>(rec.counters().*field); };
    type == MetricType::kCounter ? r.AddCallbackCounter(name, help, value)
                                 : r.AddCallbackGauge(name, help, value);
  };
  ring(MetricType::kGauge, "hostmesh_agent_flight_ring_bytes",
       "Bytes the flight recorder's ring holds (of hostmesh_agent_flight_ring_capacity_bytes).",
       &RingCounters::bytes);
  ring(MetricType::kGauge, "hostmesh_agent_flight_ring_capacity_bytes",
       "The flight recorder's ring size (recorder.bytes).", &RingCounters::capacity);
  ring(MetricType::kGauge, "hostmesh_agent_flight_ring_events", "Events the ring holds.",
       &RingCounters::events);
  ring(MetricType::kCounter, "hostmesh_agent_flight_ring_evicted_total",
       "Events dropped from the ring to make room for newer ones.", &RingCounters::evicted);
  r.AddCallbackCounter("hostmesh_agent_flight_captures_requested_total",
                       "Flight record captures the analyzer asked for.",
                       [&desk] { return static_cast<double>(desk.counters().requested); });
  r.AddCallbackCounter("hostmesh_agent_flight_captures_uploaded_total",
                       "Flight records handed to the uploader in answer to a capture request.",
                       [&desk] { return static_cast<double>(desk.counters().uploaded); });
  r.AddCallbackFamily(
      MetricType::kCounter, "hostmesh_agent_flight_captures_refused_total",
      "Capture requests refused: duplicate (incident answered already), rate_limited "
      "(recorder.captures_per_minute), invalid (incident 0 or a bad range).",
      {"reason"}, [&desk] {
        const recorder::CaptureCounters c = desk.counters();
        std::vector<ScrapedValue> out;
        for (auto v : {recorder::CaptureVerdict::kDuplicate, recorder::CaptureVerdict::kRateLimited,
                       recorder::CaptureVerdict::kInvalid}) {
          out.push_back({{std::string(recorder::CaptureVerdictName(v))},
                         static_cast<double>(c.refused[static_cast<std::size_t>(v)])});
        }
        return out;
      });
  r.AddCallbackCounter("hostmesh_agent_flight_local_captures_total",
                       "Local captures (SIGUSR2) written under recorder.state_dir.",
                       [&local_captures] { return static_cast<double>(local_captures.load()); });
  r.AddCallbackCounter(
      "hostmesh_agent_flight_local_capture_failures_total",
      "Local captures that could not be written (warned of).",
      [&local_capture_failures] { return static_cast<double>(local_capture_failures.load()); });
}

}  // namespace hostmesh::agent::app
