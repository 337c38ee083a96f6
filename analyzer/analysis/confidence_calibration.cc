#include "analyzer/analysis/confidence_calibration.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hostmesh::analysis {

std::size_t CalibrationBin(double raw) {
  if (!(raw > 0)) return 0;  // NaN too
  return std::min(kCalibrationBins - 1,
                  static_cast<std::size_t>(raw * static_cast<double>(kCalibrationBins)));
}

CalibrationCounts& CalibrationCounts::operator+=(const CalibrationCounts& o) {
  for (std::size_t i = 0; i < kCalibrationBins; ++i) {
    named[i] += o.named[i];
    right[i] += o.right[i];
  }
  return *this;
}

void CalibrationCounts::Add(double raw, bool is_right) {
  const std::size_t bin = CalibrationBin(raw);
  ++named[bin];
  if (is_right) ++right[bin];
}

std::uint64_t CalibrationCounts::total() const {
  std::uint64_t n = 0;
  for (const std::uint64_t x : named) n += x;
  return n;
}

ConfidenceMap::ConfidenceMap(std::vector<CalibrationPoint> points) : points_(std::move(points)) {
  if (auto why = Validate(points_)) throw std::invalid_argument(*why);
}

std::optional<std::string> ConfidenceMap::Validate(const std::vector<CalibrationPoint>& points) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& pt = points[i];
    const std::string at = "point " + std::to_string(i) + ": ";
    if (!(pt.raw >= 0 && pt.raw <= 1)) return at + "raw must be in [0, 1]";
    if (!(pt.p >= 0 && pt.p <= 1)) return at + "p must be in [0, 1]";
    if (i == 0) continue;
    if (!(pt.raw > points[i - 1].raw)) return at + "raw must be above the previous point's";
    if (pt.p < points[i - 1].p) return at + "p must not be below the previous point's";
  }
  return std::nullopt;
}

ConfidenceMap ConfidenceMap::Fit(const CalibrationCounts& counts, double prior_right,
                                 double prior_wrong) {
  struct Block {
    double named = 0, right = 0;
    std::vector<double> centres;
  };
  const auto estimate = [&](const Block& b) {
    return (b.right + prior_right) / (b.named + prior_right + prior_wrong);
  };
  std::vector<Block> blocks;
  for (std::size_t i = 0; i < kCalibrationBins; ++i) {
    if (counts.named[i] == 0) continue;
    Block b;
    b.named = static_cast<double>(counts.named[i]);
    b.right = static_cast<double>(std::min(counts.right[i], counts.named[i]));
    b.centres.push_back((static_cast<double>(i) + 0.5) / static_cast<double>(kCalibrationBins));
    blocks.push_back(std::move(b));
    // Pool while the newest block is below the one before it.
    while (blocks.size() >= 2 && estimate(blocks[blocks.size() - 2]) > estimate(blocks.back())) {
      Block last = std::move(blocks.back());
      blocks.pop_back();
      Block& prev = blocks.back();
      prev.named += last.named;
      prev.right += last.right;
      prev.centres.insert(prev.centres.end(), last.centres.begin(), last.centres.end());
    }
  }
  std::vector<CalibrationPoint> points;
  for (const Block& b : blocks) {
    // Rounded so that the map pasted into a config reads back the same.
    const double p = std::round(estimate(b) * 1000) / 1000;
    // A pooled block is flat: its first and last centre say all of it.
    points.push_back({std::round(b.centres.front() * 1000) / 1000, p});
    if (b.centres.size() > 1) points.push_back({std::round(b.centres.back() * 1000) / 1000, p});
  }
  return ConfidenceMap(std::move(points));
}

double ConfidenceMap::Apply(double raw) const {
  raw = std::isnan(raw) ? 0.0 : std::clamp(raw, 0.0, 1.0);
  if (points_.empty()) return raw;
  if (raw <= points_.front().raw) return points_.front().p;
  if (raw >= points_.back().raw) return points_.back().p;
  const auto hi = std::upper_bound(points_.begin(), points_.end(), raw,
                                   [](double r, const CalibrationPoint& pt) { return r < pt.raw; });
  const auto lo = hi - 1;
  const double t = (raw - lo->raw) / (hi->raw - lo->raw);
  return lo->p + t * (hi->p - lo->p);
}

ConfidenceCalibration DefaultConfidenceCalibration() {
  // hostmesh-sim calibrate on the suites of sim/README.md, "Calibration".
  ConfidenceCalibration c;
  c.loss = ConfidenceMap({{0.05, 0.268},
                          {0.15, 0.268},
                          {0.25, 0.372},
                          {0.35, 0.635},
                          {0.45, 0.635},
                          {0.55, 0.87},
                          {0.65, 0.898},
                          {0.75, 0.95},
                          {0.85, 0.98},
                          {0.95, 0.981}});
  c.latency = ConfidenceMap({{0.85, 0.667}, {0.95, 0.995}});
  c.processing = ConfidenceMap({{0.95, 0.983}});
  return c;
}

}  // namespace hostmesh::analysis
