#pragma once

// Calibrated confidence: what share of the analyzer's verdicts at a given raw
// score were right in the fleet simulator's suite. The inference gives each
// verdict a raw score in [0, 1] (a loss culprit: the share of the failures
// through it that it alone explains, times its evidence over the threshold; a
// latency hotspot: the share of its paths that show the excess); a
// ConfidenceMap turns it into a probability of being right, a monotone
// piecewise-linear curve fitted from counts of verdicts named and right per raw
// bin (pool-adjacent-violators with a Beta prior, so a bin with few verdicts
// says neither "never" nor "always").

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hostmesh::analysis {

struct CalibrationPoint {
  double raw = 0;  // raw score, in [0, 1]
  double p = 0;    // probability the verdict is right, in [0, 1]
  friend bool operator==(const CalibrationPoint&, const CalibrationPoint&) = default;
};

// Raw-score bins the fit counts in: bin i holds raw in [i/10, (i+1)/10), the
// last one 1 too.
inline constexpr std::size_t kCalibrationBins = 10;
std::size_t CalibrationBin(double raw);

struct CalibrationCounts {
  std::array<std::uint64_t, kCalibrationBins> named{};  // verdicts with a raw score in the bin
  std::array<std::uint64_t, kCalibrationBins> right{};  // ...of which right
  CalibrationCounts& operator+=(const CalibrationCounts& o);
  void Add(double raw, bool is_right);
  std::uint64_t total() const;
};

class ConfidenceMap {
 public:
  // No points: the identity (confidence = raw score).
  ConfidenceMap() = default;
  // Points must pass Validate; an invalid list throws std::invalid_argument.
  explicit ConfidenceMap(std::vector<CalibrationPoint> points);

  // Why `points` is not a map, or nullopt: raw strictly increasing, p
  // non-decreasing, both in [0, 1].
  static std::optional<std::string> Validate(const std::vector<CalibrationPoint>& points);

  // Pool-adjacent-violators over the non-empty bins, each block estimated as
  // (right + prior_right) / (named + prior_right + prior_wrong); a point at
  // the centre of a block's first and last bin.
  static ConfidenceMap Fit(const CalibrationCounts& counts, double prior_right = 1,
                           double prior_wrong = 1);

  // Linear between points, flat beyond the first and the last; raw clamped to [0, 1].
  double Apply(double raw) const;

  const std::vector<CalibrationPoint>& points() const { return points_; }
  bool identity() const { return points_.empty(); }
  friend bool operator==(const ConfidenceMap&, const ConfidenceMap&) = default;

 private:
  std::vector<CalibrationPoint> points_;
};

// One map per kind of verdict: their raw scores are not on one scale.
struct ConfidenceCalibration {
  ConfidenceMap loss;        // loss culprits: links, RNICs, switches
  ConfidenceMap latency;     // latency hotspots
  ConfidenceMap processing;  // hosts flagged for processing delay
  friend bool operator==(const ConfidenceCalibration&, const ConfidenceCalibration&) = default;
};

// The defaults, fitted with `hostmesh-sim calibrate` on the simulator's suite
// (sim/README.md, "Calibration").
ConfidenceCalibration DefaultConfidenceCalibration();

}  // namespace hostmesh::analysis
