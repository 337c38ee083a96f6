#include "common/metrics/buckets.h"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

namespace hostmesh::metrics {
namespace {

double RoundToSignificantDigits(double v) {
  char buf[64];
  auto printed = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 12);
  double rounded = v;
  std::from_chars(buf, printed.ptr, rounded);
  return rounded;
}

void RequireCount(std::size_t count) {
  if (count == 0) throw std::invalid_argument("bucket count must be positive");
}

}  // namespace

std::vector<double> ExponentialBuckets(double start, double factor, std::size_t count) {
  RequireCount(count);
  if (!(start > 0) || !(factor > 1)) {
    throw std::invalid_argument("exponential buckets need start > 0 and factor > 1");
  }
  std::vector<double> bounds;
  bounds.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    bounds.push_back(RoundToSignificantDigits(start * std::pow(factor, static_cast<double>(i))));
  }
  ValidateBucketBounds(bounds);
  return bounds;
}

std::vector<double> ExponentialBucketsRange(double min, double max, std::size_t count) {
  if (count < 2) throw std::invalid_argument("a bucket range needs at least two bounds");
  if (!(min > 0) || !(max > min)) {
    throw std::invalid_argument("exponential bucket range needs 0 < min < max");
  }
  const double factor = std::pow(max / min, 1.0 / static_cast<double>(count - 1));
  return ExponentialBuckets(min, factor, count);
}

std::vector<double> LinearBuckets(double start, double width, std::size_t count) {
  RequireCount(count);
  if (!(width > 0)) throw std::invalid_argument("linear buckets need width > 0");
  std::vector<double> bounds;
  bounds.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    bounds.push_back(RoundToSignificantDigits(start + width * static_cast<double>(i)));
  }
  ValidateBucketBounds(bounds);
  return bounds;
}

void ValidateBucketBounds(std::span<const double> bounds) {
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) {
      throw std::invalid_argument("bucket bound " + std::to_string(i) +
                                  " is not finite (+Inf is implied)");
    }
    if (i > 0 && !(bounds[i] > bounds[i - 1])) {
      throw std::invalid_argument("bucket bounds must strictly ascend (bound " + std::to_string(i) +
                                  ")");
    }
  }
}

}  // namespace hostmesh::metrics
