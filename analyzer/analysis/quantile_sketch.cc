#include "analyzer/analysis/quantile_sketch.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hostmesh::analysis {

QuantileSketch::QuantileSketch(double alpha)
    : alpha_(alpha),
      gamma_((1 + alpha) / (1 - alpha)),
      inv_log_gamma_(1.0 / std::log((1 + alpha) / (1 - alpha))) {
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("sketch alpha must be in (0, 1)");
}

int QuantileSketch::Index(double value) const {
  if (!(value > 0)) return kZeroIndex;
  return static_cast<int>(std::ceil(std::log(value) * inv_log_gamma_));
}

void QuantileSketch::AddIndex(int index, std::uint32_t count) {
  count_ += count;
  if (index == kZeroIndex) {
    zeros_ += count;
    return;
  }
  if (counts_.empty()) {
    offset_ = index;
    counts_.assign(1, 0);
  } else if (index < offset_) {
    // Grow downwards with some headroom so a slowly falling minimum does not
    // shift the array on every value.
    const int grow = std::max(offset_ - index, 16);
    counts_.insert(counts_.begin(), static_cast<std::size_t>(grow), 0);
    offset_ -= grow;
  } else if (index - offset_ >= static_cast<int>(counts_.size())) {
    counts_.resize(static_cast<std::size_t>(index - offset_) + 1, 0);
  }
  counts_[static_cast<std::size_t>(index - offset_)] += count;
}

void QuantileSketch::Merge(const QuantileSketch& other) {
  if (other.alpha_ != alpha_) throw std::invalid_argument("merging sketches of different alpha");
  zeros_ += other.zeros_;
  count_ += other.zeros_;
  for (std::size_t i = 0; i < other.counts_.size(); ++i) {
    if (other.counts_[i] != 0) AddIndex(other.offset_ + static_cast<int>(i), other.counts_[i]);
  }
}

void QuantileSketch::Clear() {
  counts_.clear();
  zeros_ = 0;
  count_ = 0;
}

double QuantileSketch::Quantile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(count_ - 1));
  if (rank < zeros_) return 0;
  std::uint64_t seen = zeros_;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen > rank) {
      return 2 * std::pow(gamma_, offset_ + static_cast<int>(i)) / (gamma_ + 1);
    }
  }
  return 2 * std::pow(gamma_, offset_ + static_cast<int>(counts_.size()) - 1) / (gamma_ + 1);
}

double QuantileSketch::TrimmedMean(double lo, double hi) const {
  lo = std::clamp(lo, 0.0, 1.0);
  hi = std::clamp(hi, lo, 1.0);
  const double n = static_cast<double>(count_);
  const double from = lo * n, to = hi * n;
  if (count_ == 0 || to <= from) return 0;
  // Ranks [from, to) as a real interval; zeros add weight, no value.
  double seen = static_cast<double>(zeros_);
  double sum = 0;
  double midpoint =
      2 * std::pow(gamma_, offset_) / (gamma_ + 1);  // of bucket i, times gamma a step
  for (std::size_t i = 0; i < counts_.size() && seen < to; ++i, midpoint *= gamma_) {
    const double next = seen + counts_[i];
    const double inside = std::min(next, to) - std::max(seen, from);
    if (inside > 0) sum += inside * midpoint;
    seen = next;
  }
  return sum / (to - from);
}

}  // namespace hostmesh::analysis
