// Histogram bucket upper bounds (`le`); the +Inf bucket is always implied.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace hostmesh::metrics {

// start, start*factor, ... (count bounds). Bounds are rounded to 12 significant
// digits so `le` labels read 1e-05, not 1.0000000000000001e-05.
std::vector<double> ExponentialBuckets(double start, double factor, std::size_t count);

// count bounds from min to max (both included), evenly spaced in log scale:
// ExponentialBucketsRange(1e-6, 1, 13) covers 1 µs .. 1 s with ~3.16x steps.
std::vector<double> ExponentialBucketsRange(double min, double max, std::size_t count);

// start, start+width, ... (count bounds).
std::vector<double> LinearBuckets(double start, double width, std::size_t count);

// Throws std::invalid_argument unless every bound is finite and they strictly
// ascend (an empty list is fine: one +Inf bucket).
void ValidateBucketBounds(std::span<const double> bounds);

}  // namespace hostmesh::metrics
