#include "sim/information_limit.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hostmesh::sim {

bool HasLossLimit(FaultKind kind) {
  return kind == FaultKind::kLinkLoss || kind == FaultKind::kRnicLoss ||
         kind == FaultKind::kSwitchLoss || kind == FaultKind::kPcieDowngrade;
}

double BernoulliDivergence(double q1, double q0) {
  const auto term = [](double a, double b) { return a <= 0 ? 0.0 : a * std::log(a / b); };
  return term(q1, q0) + term(1 - q1, 1 - q0);
}

double SprtExpectedProbes(double q0, double q1, double alpha, double beta) {
  if (!(q1 > q0)) return std::numeric_limits<double>::infinity();
  if (q0 <= 0) return 1 / q1;
  const double drift = BernoulliDivergence(q1, q0);
  const double upper = std::log((1 - beta) / alpha);
  const double lower = std::log(beta / (1 - alpha));
  return std::max(1.0, ((1 - beta) * upper + beta * lower) / drift);
}

double AnalyzerAlpha(double false_alarms_per_window, std::size_t components) {
  return false_alarms_per_window / static_cast<double>(std::max<std::size_t>(components, 1));
}

double EvidenceWindows(const Fault& fault, const FaultExposure& exposure, const LimitParams& p) {
  const std::int64_t active = fault.end_ns - fault.start_ns;
  if (!HasLossLimit(fault.kind) || exposure.probes == 0 || active <= 0 || p.window_ns <= 0) {
    return -1;
  }
  const double probes = static_cast<double>(exposure.probes);
  const double q0 = exposure.background_sum / probes;
  // The fault's loss on top of the background a probe already meets.
  const double q1 = 1 - (1 - q0) * (1 - std::clamp(fault.rate, 0.0, 1.0));
  const double per_window = probes * static_cast<double>(p.window_ns) / static_cast<double>(active);
  return SprtExpectedProbes(q0, q1, p.alpha, p.beta) / per_window;
}

double LimitTimeToName(const Fault& fault, double evidence_windows, std::int64_t window_ns) {
  if (evidence_windows < 0 || window_ns <= 0) return -1;
  const double w = static_cast<double>(window_ns);
  const double start = static_cast<double>(fault.start_ns) / w;  // in windows
  const double enough = start + evidence_windows;
  // The end of the window holding that instant: a window ending exactly then names it.
  const double named_at = std::max(std::ceil(enough), std::floor(start) + 1);
  return named_at - start;
}

}  // namespace hostmesh::sim
