#pragma once

// What the probes could possibly tell: for a loss fault, the fewest windows
// any sequential test needs on average to name it at the analyzer's
// false-alarm rate, the reference beside which the scorecard puts the
// measured time to name (issue 29).
//
// Wald's sequential probability ratio test is the optimal test of H1 (the
// component's probes fail at q1) against H0 (they fail at the background q0):
// no test with the same error rates needs fewer probes on average. Under H1 it
// needs
//   E[N] = ((1 - beta) ln((1 - beta) / alpha) + beta ln(beta / (1 - alpha)))
//          / KL(q1 || q0)
// probes, KL the Kullback-Leibler divergence of the two Bernoulli rates (nats
// per probe). alpha is the chance of naming a healthy component in a window:
// the analyzer's fleet-wide false alarms per window spread over its
// components (sequential_inference.h's threshold ln(components) +
// ln(1 / false_alarms_per_window) is ln(1 / alpha)); beta the chance of
// missing the fault. With q0 = 0 one failure is proof: E[N] = 1 / q1.
//
// The simulator counts, per fault, the probes that crossed its component
// while it was active and the background loss on their paths (FaultExposure);
// n probes a window then turn E[N] into windows of evidence.

#include <cstdint>
#include <vector>

#include "sim/faults.h"

namespace hostmesh::sim {

// One fault's exposure: the probes that met its component while it was
// active (each once), and the sum of their paths' background loss.
struct FaultExposure {
  std::uint64_t probes = 0;
  double background_sum = 0;
  FaultExposure& operator+=(const FaultExposure& o) {
    probes += o.probes;
    background_sum += o.background_sum;
    return *this;
  }
};

// Kinds whose loss applies to every packet that meets the component, at the
// fault's rate: the ones the reference is defined for.
bool HasLossLimit(FaultKind kind);

// KL(q1 || q0) of two Bernoulli rates, nats; q0 in (0, 1), q1 in [0, 1].
double BernoulliDivergence(double q1, double q0);

// Wald's expected sample size under H1 (above); q0 in [0, 1), q1 in (q0, 1],
// 0 < alpha, beta < 1. Infinity when q1 <= q0.
double SprtExpectedProbes(double q0, double q1, double alpha, double beta);

struct LimitParams {
  double alpha = 1e-8;  // per component and window
  double beta = 0.05;
  std::int64_t window_ns = 0;
};

// alpha of the analyzer: false_alarms_per_window over the fleet's components
// (directed links, switches, NICs), as its CUSUM threshold reads it.
double AnalyzerAlpha(double false_alarms_per_window, std::size_t components);

// Windows of evidence the reference test needs for `fault` (E[N] over the
// probes a window its component met); negative when the kind has no
// reference or no probe met it.
double EvidenceWindows(const Fault& fault, const FaultExposure& exposure, const LimitParams& p);

// The reference's time to name, in windows from the fault's start to the end
// of the window in which it has had that evidence (a windowed analyzer names
// at window ends, as the measured time counts too). Windows start at
// multiples of window_ns.
double LimitTimeToName(const Fault& fault, double evidence_windows, std::int64_t window_ns);

}  // namespace hostmesh::sim
