#pragma once

// Which of the analyzer's capture requests (UploadAck.captures) the agent
// answers. Pure, driven by the caller's monotonic time: one record per
// incident (a resent or repeated request is a duplicate), at most `burst`
// records at once and `per_minute` after that, and only sane ranges. A
// capture costs an extraction and up to a ring's worth of upload, so an
// analyzer that asks too often is refused, counted and warned of, rather
// than followed.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_set>

#include "common/base/clock.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::agent::recorder {

struct CapturePolicyOptions {
  double per_minute = 4;
  double burst = 4;
  // Incident ids remembered for deduplication (oldest forgotten first).
  std::size_t remembered = 1024;
  // A longer range is refused: the ring never holds that much.
  std::chrono::nanoseconds max_range = std::chrono::hours{1};
};

enum class CaptureVerdict {
  kAccept,
  kDuplicate,    // this incident was answered (or refused for its range) already
  kRateLimited,  // too many captures lately
  kInvalid,      // incident id 0, or a range that is empty, reversed or too long
};
std::string_view CaptureVerdictName(CaptureVerdict verdict);

class CapturePolicy {
 public:
  CapturePolicy(CapturePolicyOptions options, MonoTime start);

  // Decides on one request; `why` says why when refused.
  CaptureVerdict Decide(const v1::CaptureRequest& request, MonoTime now, std::string* why);

 private:
  void Remember(std::uint64_t incident_id);

  const CapturePolicyOptions options_;
  double tokens_;
  MonoTime refilled_at_;
  std::unordered_set<std::uint64_t> seen_;
  std::deque<std::uint64_t> seen_order_;
};

}  // namespace hostmesh::agent::recorder
