#include "agent/recorder/capture_policy.h"

#include <algorithm>

namespace hostmesh::agent::recorder {

std::string_view CaptureVerdictName(CaptureVerdict verdict) {
  switch (verdict) {
    case CaptureVerdict::kAccept:
      return "accepted";
    case CaptureVerdict::kDuplicate:
      return "duplicate";
    case CaptureVerdict::kRateLimited:
      return "rate_limited";
    case CaptureVerdict::kInvalid:
      return "invalid";
  }
  return "unknown";
}

CapturePolicy::CapturePolicy(CapturePolicyOptions options, MonoTime start)
    : options_(options), tokens_(options.burst), refilled_at_(start) {}

CaptureVerdict CapturePolicy::Decide(const v1::CaptureRequest& request, MonoTime now,
                                     std::string* why) {
  const std::uint64_t id = request.incident_id();
  if (id == 0) {
    *why = "incident_id 0 (reserved for local captures)";
    return CaptureVerdict::kInvalid;
  }
  if (seen_.count(id) != 0) {
    *why = "incident " + std::to_string(id) + " was answered already";
    return CaptureVerdict::kDuplicate;
  }
  // Unsigned: exact for any from < to, never overflows.
  const std::uint64_t span =
      static_cast<std::uint64_t>(request.to_ns()) - static_cast<std::uint64_t>(request.from_ns());
  if (request.from_ns() >= request.to_ns() ||
      span > static_cast<std::uint64_t>(options_.max_range.count())) {
    // Remembered too: the same bad request again is a duplicate, not news.
    Remember(id);
    *why = "incident " + std::to_string(id) + ": range [" + std::to_string(request.from_ns()) +
           ", " + std::to_string(request.to_ns()) + ") is empty or longer than " +
           std::to_string(
               std::chrono::duration_cast<std::chrono::seconds>(options_.max_range).count()) +
           " s";
    return CaptureVerdict::kInvalid;
  }
  const double minutes = std::chrono::duration<double>(now - refilled_at_).count() / 60.0;
  tokens_ = std::min(options_.burst, tokens_ + std::max(0.0, minutes) * options_.per_minute);
  refilled_at_ = now;
  if (tokens_ < 1.0) {
    // Not remembered: the analyzer may ask again once the rate allows.
    *why = "incident " + std::to_string(id) + ": over " + std::to_string(options_.per_minute) +
           " captures a minute";
    return CaptureVerdict::kRateLimited;
  }
  tokens_ -= 1.0;
  Remember(id);
  return CaptureVerdict::kAccept;
}

void CapturePolicy::Remember(std::uint64_t id) {
  seen_.insert(id);
  seen_order_.push_back(id);
  if (seen_order_.size() > options_.remembered) {
    seen_.erase(seen_order_.front());
    seen_order_.pop_front();
  }
}

}  // namespace hostmesh::agent::recorder
