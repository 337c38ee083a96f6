#pragma once

// Answers the analyzer's capture requests from the flight recorder: the
// policy decides (capture_policy.h), the recorder extracts, refusals are
// counted by verdict and warned of at most once a minute. Called from the
// uploader's thread only; the counters are read from the scrape thread.

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>

#include "agent/recorder/capture_policy.h"
#include "agent/recorder/flight_recorder.h"
#include "common/base/warn_throttle.h"

namespace hostmesh::agent::recorder {

struct CaptureCounters {
  std::uint64_t requested = 0;
  std::uint64_t uploaded = 0;  // records handed to the uploader (spooled, then acked)
  // Refused, by verdict (CaptureVerdict order; kAccept's slot stays 0).
  std::array<std::uint64_t, 4> refused{};
  std::uint64_t refused_total() const { return refused[1] + refused[2] + refused[3]; }
};

class CaptureDesk {
 public:
  CaptureDesk(const FlightRecorder& recorder, CapturePolicyOptions policy, ExtractLimits limits,
              MonoTime start);

  // The record answering `request`, or nullopt when refused.
  std::optional<v1::FlightRecord> Answer(const v1::CaptureRequest& request, MonoTime now);

  CaptureCounters counters() const;

 private:
  const FlightRecorder& recorder_;
  const ExtractLimits limits_;
  CapturePolicy policy_;
  WarnThrottle refusals_warn_{std::chrono::minutes{1}};
  mutable std::mutex mu_;  // counters_, for the scrape thread
  CaptureCounters counters_;
};

}  // namespace hostmesh::agent::recorder
