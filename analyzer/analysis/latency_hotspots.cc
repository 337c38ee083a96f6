#include "analyzer/analysis/latency_hotspots.h"

#include <algorithm>

namespace hostmesh::analysis {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace

void LatencyBaselines::Learn(std::size_t directed, double excess_ns, double decay) {
  if (directed >= baseline_.size()) {
    baseline_.resize(directed + 1, 0);
    seen_.resize(directed + 1, 0);
  }
  baseline_[directed] =
      seen_[directed] ? decay * baseline_[directed] + (1 - decay) * excess_ns : excess_ns;
  seen_[directed] = 1;
}

std::vector<Hotspot> FindHotspots(const std::vector<QuantileSketch>& middle_latency,
                                  const PathTable& paths, std::size_t links,
                                  LatencyBaselines& baselines, const HotspotParams& params) {
  // Paths with enough probes, their median, and the directed links they cross.
  struct PathLatency {
    double excess;
    std::uint64_t probes;
    std::vector<std::uint32_t> directed;
  };
  std::vector<PathLatency> measured;
  std::vector<double> medians;
  for (std::size_t m = 0; m < middle_latency.size(); ++m) {
    const QuantileSketch& s = middle_latency[m];
    if (s.count() < params.min_probes_per_path) continue;
    PathLatency p{s.Quantile(0.5), s.count(), {}};
    const auto middle = paths.Middle(static_cast<MiddleId>(m));
    const std::size_t half = middle.size() / 2;
    for (std::size_t i = 0; i < middle.size(); ++i) {
      if (middle[i] == kUnknown || middle[i] >= links) continue;
      p.directed.push_back(static_cast<std::uint32_t>(2 * middle[i] + (i < half ? 0 : 1)));
    }
    medians.push_back(p.excess);
    measured.push_back(std::move(p));
  }
  std::vector<Hotspot> out;
  if (measured.size() < 4) return out;  // no fleet to compare with
  const double fleet = Median(medians);
  std::vector<std::vector<std::uint32_t>> through(2 * links);
  for (std::uint32_t i = 0; i < measured.size(); ++i) {
    measured[i].excess -= fleet;
    for (const std::uint32_t d : measured[i].directed) through[d].push_back(i);
  }

  std::vector<char> hot(2 * links, 0);
  std::vector<double> excess;
  for (std::size_t round = 0; round < params.max_hotspots; ++round) {
    Hotspot best;
    std::uint32_t best_d = 0;
    for (std::uint32_t d = 0; d < through.size(); ++d) {
      if (hot[d] || through[d].size() < params.min_paths) continue;
      excess.clear();
      std::uint64_t probes = 0;
      for (const std::uint32_t i : through[d]) {
        excess.push_back(measured[i].excess - baselines.Of(d));
        probes += measured[i].probes;
      }
      const double e = Median(excess);
      if (e < params.min_excess_ns || e <= best.excess_ns) continue;
      const auto consistent =
          std::count_if(excess.begin(), excess.end(), [&](double x) { return x >= e / 2; });
      const double share = static_cast<double>(consistent) / static_cast<double>(excess.size());
      if (share < params.consistency) continue;
      best = {d / 2, d % 2 == 0, e, static_cast<std::uint32_t>(excess.size()), probes, share};
      best_d = d;
    }
    if (best.excess_ns <= 0) break;
    hot[best_d] = 1;
    out.push_back(best);
    // Its share of every path through it is explained.
    for (const std::uint32_t i : through[best_d]) measured[i].excess -= best.excess_ns;
  }
  // Links not hot learn their usual excess, unless it drifts towards a hotspot
  // (a slowly growing one must not become the baseline).
  for (std::uint32_t d = 0; d < through.size(); ++d) {
    if (hot[d] || through[d].size() < params.min_paths) continue;
    excess.clear();
    for (const std::uint32_t i : through[d]) excess.push_back(measured[i].excess);
    const double e = Median(excess);
    if (e < params.min_excess_ns / 2) baselines.Learn(d, e, params.baseline_decay);
  }
  return out;
}

}  // namespace hostmesh::analysis
