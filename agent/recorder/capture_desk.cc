#include "agent/recorder/capture_desk.h"

#include <string>

#include "common/base/logging.h"

namespace hostmesh::agent::recorder {

CaptureDesk::CaptureDesk(const FlightRecorder& recorder, CapturePolicyOptions policy,
                         ExtractLimits limits, MonoTime start)
    : recorder_(recorder), limits_(limits), policy_(policy, start) {}

std::optional<v1::FlightRecord> CaptureDesk::Answer(const v1::CaptureRequest& request,
                                                    MonoTime now) {
  std::string why;
  const CaptureVerdict verdict = policy_.Decide(request, now, &why);
  {
    std::lock_guard lock(mu_);
    ++counters_.requested;
    if (verdict != CaptureVerdict::kAccept) ++counters_.refused[static_cast<std::size_t>(verdict)];
  }
  if (verdict != CaptureVerdict::kAccept) {
    // A duplicate is the analyzer resending after a reconnect: not news.
    if (verdict != CaptureVerdict::kDuplicate) {
      if (const auto n = refusals_warn_.Note(now)) {
        GetLogger("recorder")
            ->warn(
                "flight recorder: refused a capture request ({}): {} ({} refused since the last "
                "warning; hostmesh_agent_flight_captures_refused_total)",
                CaptureVerdictName(verdict), why, *n);
      }
    }
    return std::nullopt;
  }
  v1::FlightRecord record =
      recorder_.Extract(request.incident_id(), request.from_ns(), request.to_ns(), limits_);
  GetLogger("recorder")
      ->info("flight recorder: incident {} asked for [{}, {}): {} events{}{}",
             request.incident_id(), request.from_ns(), request.to_ns(), record.events_size(),
             record.truncated() ? ", truncated to the record's cap" : "",
             record.dropped_before() != 0
                 ? ", " + std::to_string(record.dropped_before()) + " already overwritten"
                 : std::string());
  std::lock_guard lock(mu_);
  ++counters_.uploaded;
  return record;
}

CaptureCounters CaptureDesk::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

}  // namespace hostmesh::agent::recorder
