#include "tracer/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace hostmesh::tracer {

TokenBucket::TokenBucket(double rate_per_second, double burst, MonoTime now)
    : rate_(std::max(rate_per_second, 1e-9)),
      burst_(std::max(burst, 1.0)),
      tokens_(burst_),
      updated_(now) {}

double TokenBucket::Tokens(MonoTime now) const {
  if (now <= updated_) return tokens_;
  const double elapsed = std::chrono::duration<double>(now - updated_).count();
  return std::min(burst_, tokens_ + elapsed * rate_);
}

void TokenBucket::Refill(MonoTime now) {
  tokens_ = Tokens(now);
  updated_ = std::max(updated_, now);
}

bool TokenBucket::TryTake(double n, MonoTime now) {
  Refill(now);
  // A hair of slack: refills are computed in floating point, and a request
  // made exactly at WhenAvailable() must succeed.
  if (tokens_ + 1e-9 < n) return false;
  tokens_ -= n;
  return true;
}

void TokenBucket::Charge(double n, MonoTime now) {
  Refill(now);
  tokens_ = std::min(burst_, tokens_ - n);
}

MonoTime TokenBucket::WhenAvailable(double n, MonoTime now) const {
  const double missing = std::min(n, burst_) - Tokens(now);
  if (missing <= 0) return now;
  const auto wait =
      std::chrono::nanoseconds(static_cast<std::int64_t>(std::ceil(missing / rate_ * 1e9)));
  return std::max(now, updated_) + wait;
}

}  // namespace hostmesh::tracer
