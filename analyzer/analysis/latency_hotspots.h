#pragma once

// Latency hotspots relative to each link's own baseline. RoCE congestion adds
// tens of microseconds, not milliseconds, so a fixed "slow probe" bar finds
// nothing; and a busy host delays probes at random, which must not look like
// a link. So per window, per traced fabric path, the median network latency
// (robust to scattered slow probes); every path's excess over the fleet's
// median path; per directed link the median excess of the paths through it,
// less the link's own baseline (its usual excess: a longer cable, a deeper
// buffer), learned in windows it is not hot. A link is hot when that excess
// is at least min_excess and consistent: most paths through it show at least
// half of it, and it stands out of the window's noise: noise_z times the
// spread of all paths' excesses (robust: a median of absolute deviations), or
// the latency sketch's resolution, whichever is larger. Sampling noise, a
// sketch bucket and a jittery delay line all show in that spread; on a
// fabric with microsecond paths it is far below min_excess. Greedily, the hottest link's excess is
// taken off its paths before the next is judged, so two hotspots on one path are both found and a
// hotspot does not heat the links it shares paths with.

#include <cstdint>
#include <vector>

#include "analyzer/analysis/path_table.h"
#include "analyzer/analysis/quantile_sketch.h"

namespace hostmesh::analysis {

struct HotspotParams {
  double min_excess_ns = 10'000;  // AnalysisConfig::hotspot_min_excess
  std::uint32_t min_probes_per_path = 8;
  // A path's median stands for the window only when it holds at least this
  // share of the path's answered probes: a path traced late in the window has
  // latencies from after its trace alone, and a few seconds of congestion
  // that moves on can be most of them (every false latency verdict at 1,000
  // hosts was in a run's first windows, when most paths are traced late).
  double min_traced_share = 0.5;
  std::uint32_t min_paths = 2;
  double consistency = 0.75;
  double noise_z = 4.0;
  double baseline_decay = 0.9;
  std::size_t max_hotspots = 32;
};

struct Hotspot {
  LinkId link = kUnknown;
  bool up = true;        // which way: climbing (rail switch to spine) or coming down
  double excess_ns = 0;  // of its paths' medians: what it is found by
  // What it adds on average (its paths' trimmed means, at least excess_ns): a
  // congested queue's wait has a long tail, so its median says too little.
  double added_ns = 0;
  std::uint32_t paths = 0;  // paths through it with enough probes
  std::uint64_t probes = 0;
  double consistency = 0;  // share of its paths showing at least half its excess
};

// Per directed link (2 * link + (up ? 0 : 1)): its usual excess. Until a
// link has been seen in a few windows its baseline is shrunk towards the
// fleet's (zero): one early window, with half the paths traced, must not set
// a bar that a normal window later clears.
class LatencyBaselines {
 public:
  static constexpr double kPriorWindows = 3;
  double Of(std::size_t directed) const;
  void Learn(std::size_t directed, double excess_ns, double decay);
  std::size_t memory_bytes() const {
    return baseline_.capacity() * sizeof(double) + windows_.capacity() * sizeof(std::uint16_t);
  }

 private:
  std::vector<double> baseline_;
  std::vector<std::uint16_t> windows_;  // learned in, saturating
};

// `slow` (optional): the directed links not hot whose paths are still at
// least half the bar over their baseline, by link: a queue's level wanders,
// so a fail-slow link has windows under the bar, and those are not clean.
// `answered[m]`: path m's answered probes in the window, its late-traced ones
// included (empty: every answered probe is in its sketch).
std::vector<Hotspot> FindHotspots(const std::vector<QuantileSketch>& middle_latency,
                                  const std::vector<std::uint32_t>& answered,
                                  const PathTable& paths, std::size_t links,
                                  LatencyBaselines& baselines, const HotspotParams& params,
                                  std::vector<Hotspot>* slow = nullptr);

}  // namespace hostmesh::analysis
