#pragma once

// A mergeable quantile sketch in the style of DDSketch (Masson et al., VLDB 2019).
//
// A positive value x falls into bucket i = ceil(log_gamma(x)), gamma =
// (1+alpha)/(1-alpha); a quantile is answered with its bucket's midpoint
// 2 gamma^i / (gamma+1). Every value of bucket i lies in (gamma^(i-1), gamma^i],
// so the answer is within a relative error alpha of the exact sample quantile
// (the value of rank floor(q (n-1)) in sorted order) — for any distribution, at
// any rank, and after any number of merges, since merging adds bucket counts.
// With alpha = 1% a range 1 ns..1 s needs ~1,040 buckets; a host's latencies
// span far less, and only the span between the smallest and largest bucket is
// stored. Values <= 0 (timestamps of two clocks can invert) count as 0.

#include <cstdint>
#include <vector>

namespace hostmesh::analysis {

class QuantileSketch {
 public:
  static constexpr double kDefaultAlpha = 0.01;

  explicit QuantileSketch(double alpha = kDefaultAlpha);

  // The bucket of a value; Add(value) == AddIndex(Index(value)). Lets a caller
  // file one value into several sketches (host, rail) for one logarithm.
  int Index(double value) const;
  void AddIndex(int index, std::uint32_t count = 1);
  void Add(double value) { AddIndex(Index(value)); }

  // Precondition: other has the same alpha.
  void Merge(const QuantileSketch& other);
  void Clear();

  // The q-quantile (0 <= q <= 1); 0 when empty.
  double Quantile(double q) const;
  // The mean of the values ranked in the [lo, hi) share of all (0 <= lo < hi
  // <= 1), each its bucket's midpoint; 0 when empty. A mean without its
  // tails: a queue's typical added wait, not one descheduled probe's.
  double TrimmedMean(double lo, double hi) const;
  std::uint64_t count() const { return count_; }
  double alpha() const { return alpha_; }
  std::size_t bucket_span() const { return counts_.size(); }

  static constexpr int kZeroIndex = -(1 << 30);  // values <= 0

 private:
  double alpha_;
  double gamma_;
  double inv_log_gamma_;
  int offset_ = 0;  // bucket index of counts_[0]
  std::vector<std::uint32_t> counts_;
  std::uint64_t zeros_ = 0;
  std::uint64_t count_ = 0;
};

}  // namespace hostmesh::analysis
