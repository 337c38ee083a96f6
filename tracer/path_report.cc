#include "tracer/path_report.h"

#include <algorithm>

namespace hostmesh::tracer {
namespace {

bool IsDestination(const Hop& h) {
  return h.status == HopStatus::kDestination || h.status == HopStatus::kInferredDestination;
}

// TTL of the hop with `pred`, or 0.
template <typename Pred>
int TtlWhere(const std::vector<Hop>& hops, Pred pred) {
  const auto it = std::find_if(hops.begin(), hops.end(), pred);
  return it == hops.end() ? 0 : it->ttl;
}

}  // namespace

bool PathsDiffer(const std::vector<Hop>& a, const std::vector<Hop>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (!a[i].address.IsZero() && !b[i].address.IsZero() && a[i].address != b[i].address) {
      return true;
    }
  }
  const int dest_a = TtlWhere(a, IsDestination);
  const int dest_b = TtlWhere(b, IsDestination);
  if (dest_a != 0 && dest_b != 0 && dest_a != dest_b) return true;
  const auto refused = [](const Hop& h) { return h.status == HopStatus::kUnreachable; };
  return TtlWhere(a, refused) != TtlWhere(b, refused);
}

std::vector<Hop> MergeKnownHops(const std::vector<Hop>& older, const std::vector<Hop>& newer) {
  if (PathsDiffer(older, newer)) return newer;
  std::vector<Hop> merged = newer;
  for (std::size_t i = 0; i < merged.size() && i < older.size(); ++i) {
    if (merged[i].status == HopStatus::kSilent && older[i].status == HopStatus::kTimeExceeded) {
      merged[i] = older[i];
    }
  }
  return merged;
}

}  // namespace hostmesh::tracer
