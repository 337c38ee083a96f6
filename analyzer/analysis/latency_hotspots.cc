#include "analyzer/analysis/latency_hotspots.h"

#include <algorithm>
#include <cmath>

namespace hostmesh::analysis {
namespace {

// A path's mean keeps all but its slowest percent: a descheduled probe or a
// burst on another hop must not move it, a queue's long tail mostly does.
constexpr double kKeptShare = 0.99;

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace

double LatencyBaselines::Of(std::size_t directed) const {
  if (directed >= baseline_.size()) return 0;
  const double n = windows_[directed];
  return baseline_[directed] * n / (n + kPriorWindows);
}

void LatencyBaselines::Learn(std::size_t directed, double excess_ns, double decay) {
  if (directed >= baseline_.size()) {
    baseline_.resize(directed + 1, 0);
    windows_.resize(directed + 1, 0);
  }
  std::uint16_t& n = windows_[directed];
  // The mean of the first windows, then an exponential average.
  const double weight = std::max(1 - decay, 1.0 / (n + 1.0));
  baseline_[directed] += weight * (excess_ns - baseline_[directed]);
  if (n < UINT16_MAX) ++n;
}

namespace {

// One traced path's latency in the window, against the fleet's median path.
struct PathLatency {
  double excess;  // of its median
  double mean;    // of its trimmed mean: what a hotspot adds on average
  std::uint64_t probes;
  std::vector<std::uint32_t> directed;  // the directed links it crosses
};

// The window's paths with enough probes, and the noise of their excesses.
struct MeasuredPaths {
  std::vector<PathLatency> paths;
  std::vector<std::vector<std::uint32_t>> through;  // [directed link] -> paths
  double bar = 0;
};

MeasuredPaths Measure(const std::vector<QuantileSketch>& middle_latency,
                      const std::vector<std::uint32_t>& answered, const PathTable& table,
                      std::size_t links, const HotspotParams& params) {
  MeasuredPaths out;
  std::vector<double> medians, means;
  for (std::size_t m = 0; m < middle_latency.size(); ++m) {
    const QuantileSketch& s = middle_latency[m];
    if (s.count() < params.min_probes_per_path) continue;
    if (m < answered.size() &&
        static_cast<double>(s.count()) < params.min_traced_share * answered[m]) {
      continue;
    }
    PathLatency p{s.Quantile(0.5), s.TrimmedMean(0, kKeptShare), s.count(), {}};
    const auto middle = table.Middle(static_cast<MiddleId>(m));
    const std::size_t half = middle.size() / 2;
    for (std::size_t i = 0; i < middle.size(); ++i) {
      if (middle[i] == kUnknown || middle[i] >= links) continue;
      p.directed.push_back(static_cast<std::uint32_t>(2 * middle[i] + (i < half ? 0 : 1)));
    }
    medians.push_back(p.excess);
    means.push_back(p.mean);
    out.paths.push_back(std::move(p));
  }
  if (out.paths.size() < 4) return out;  // no fleet to compare with
  const double fleet = Median(medians);
  const double fleet_mean = Median(std::move(means));
  out.through.resize(2 * links);
  std::vector<double> deviation;
  for (std::uint32_t i = 0; i < out.paths.size(); ++i) {
    PathLatency& p = out.paths[i];
    p.excess -= fleet;
    p.mean -= fleet_mean;
    deviation.push_back(std::abs(p.excess));
    for (const std::uint32_t d : p.directed) out.through[d].push_back(i);
  }
  // 1.4826 x MAD estimates a standard deviation; a bucket of the sketch
  // (2 alpha wide) is the finest difference it can show.
  const double resolution = 2 * middle_latency.front().alpha() * fleet;
  const double noise = std::max(1.4826 * Median(std::move(deviation)), resolution);
  out.bar = std::max(params.min_excess_ns, params.noise_z * noise);
  return out;
}

// A directed link's paths against its baseline: their median excess and the
// share of them showing at least half of it.
Hotspot Judge(const MeasuredPaths& m, std::uint32_t d, const LatencyBaselines& baselines,
              std::vector<double>& excess) {
  excess.clear();
  std::uint64_t probes = 0;
  for (const std::uint32_t i : m.through[d]) {
    excess.push_back(m.paths[i].excess - baselines.Of(d));
    probes += m.paths[i].probes;
  }
  const double e = Median(excess);
  const auto consistent =
      std::count_if(excess.begin(), excess.end(), [&](double x) { return x >= e / 2; });
  const double share = static_cast<double>(consistent) / static_cast<double>(excess.size());
  return {d / 2, d % 2 == 0, e, 0, static_cast<std::uint32_t>(excess.size()), probes, share};
}

// What it adds on average: its paths' trimmed means, at least its median excess.
double Added(const MeasuredPaths& m, std::uint32_t d, const LatencyBaselines& baselines,
             double excess_ns, std::vector<double>& added) {
  added.clear();
  for (const std::uint32_t i : m.through[d]) added.push_back(m.paths[i].mean - baselines.Of(d));
  return std::max(Median(added), excess_ns);
}

// The hottest directed link not yet hot that clears the bar consistently
// (excess_ns 0: none), with what it adds on average.
Hotspot Hottest(const MeasuredPaths& m, const std::vector<char>& hot,
                const LatencyBaselines& baselines, const HotspotParams& params,
                std::uint32_t* directed) {
  Hotspot best;
  std::vector<double> scratch;
  for (std::uint32_t d = 0; d < m.through.size(); ++d) {
    if (hot[d] || m.through[d].size() < params.min_paths) continue;
    const Hotspot h = Judge(m, d, baselines, scratch);
    if (h.excess_ns < m.bar || h.excess_ns <= best.excess_ns) continue;
    if (h.consistency < params.consistency) continue;
    best = h;
    *directed = d;
  }
  if (best.excess_ns > 0) best.added_ns = Added(m, *directed, baselines, best.excess_ns, scratch);
  return best;
}

}  // namespace

std::vector<Hotspot> FindHotspots(const std::vector<QuantileSketch>& middle_latency,
                                  const std::vector<std::uint32_t>& answered,
                                  const PathTable& paths, std::size_t links,
                                  LatencyBaselines& baselines, const HotspotParams& params,
                                  std::vector<Hotspot>* slow) {
  MeasuredPaths m = Measure(middle_latency, answered, paths, links, params);
  std::vector<Hotspot> out;
  if (m.through.empty()) return out;
  std::vector<char> hot(2 * links, 0);
  for (std::size_t round = 0; round < params.max_hotspots; ++round) {
    std::uint32_t d = 0;
    const Hotspot best = Hottest(m, hot, baselines, params, &d);
    if (best.excess_ns <= 0) break;
    hot[d] = 1;
    out.push_back(best);
    // Its share of every path through it is explained.
    for (const std::uint32_t i : m.through[d]) {
      m.paths[i].excess -= best.excess_ns;
      m.paths[i].mean -= best.added_ns;
    }
  }
  // Links not hot learn their usual excess, unless it drifts towards a hotspot
  // (a slowly growing one must not become the baseline); those still half
  // the bar over their baseline are slow.
  std::vector<double> excess;
  for (std::uint32_t d = 0; d < m.through.size(); ++d) {
    if (hot[d] || m.through[d].size() < params.min_paths) continue;
    excess.clear();
    for (const std::uint32_t i : m.through[d]) excess.push_back(m.paths[i].excess);
    const double e = Median(excess);
    if (e < m.bar / 2) {
      baselines.Learn(d, e, params.baseline_decay);
      continue;
    }
    if (slow == nullptr) continue;
    Hotspot h = Judge(m, d, baselines, excess);
    if (h.excess_ns < m.bar / 2) continue;
    h.added_ns = Added(m, d, baselines, h.excess_ns, excess);
    slow->push_back(h);
  }
  return out;
}

}  // namespace hostmesh::analysis
