#pragma once

// Which components (fabric links, RNICs) explain a window's failed probes.
//
// Method — greedy explanation with loss-weighted scores, in the spirit of 007
// (NSDI'18) and NetBouncer (NSDI'19), and chosen over them because:
//  - Paper Algorithm 1 (votes) ranks by raw failure counts, so a busy healthy
//    link that many failing paths share outranks a quiet faulty one, and a NIC
//    fault votes for every link of its paths. Here each component is scored by
//    failures x loss rate, where the loss rate counts the *successful* probes
//    through it too: a healthy link shared with a fault keeps a low loss rate.
//  - A faulty component explains every failure through it; once chosen, those
//    failures are removed and the scores recomputed, so two or more concurrent
//    faults are each found, and a link fault does not also indict the RNICs
//    whose paths cross it (their leftover failures fall below significance).
//  - Partial loss (5%) and 5-tuple blackholes are accepted by a binomial test
//    against a background loss rate, not by a fixed ratio: a link with 40
//    failures in 800 probes is significant, a link with 1 in 10,000 is not.
//  - Untraced probes only tell their two RNICs, and only while no link their
//    5-tuples may cross is blamed (UntracedExplainer). An RNIC with enough
//    traced probes is judged on those alone (its untraced failures are
//    ambiguous); only an RNIC with few traced probes counts untraced ones.
//  - RNICs are components like links: an RNIC fault fails its probes over all
//    its paths (high loss at the RNIC, the fabric links diluted by other NICs'
//    successes), a link fault only over the paths through that link (the link's
//    loss is higher than any RNIC's), so one run separates the two.
// Cost: O(failure groups x path length) per chosen culprit; successes enter
// only as per-component counts, so the close is cheap when failures are rare.

#include <cstdint>
#include <span>
#include <vector>

namespace hostmesh::analysis {

// Components are numbered 0..components-1 by the caller (links, then RNICs).
struct InferenceProblem {
  std::size_t components = 0;
  std::vector<std::uint64_t> good;           // traced successes through each component
  std::vector<std::uint64_t> good_untraced;  // untraced successes (RNICs only)

  // Failed probes with the same components (one NIC pair, one path).
  struct Group {
    std::uint32_t pair = 0;   // index into pairs
    std::uint32_t bad = 0;    // failures
    std::uint32_t first = 0;  // into comps
    std::uint32_t size = 0;
    bool traced = false;  // untraced: comps are the two RNICs only
  };
  std::vector<Group> groups;
  std::vector<std::uint32_t> comps;
  // Parallel to comps: the chance the group's path crosses the component. 1
  // but for the candidates of a trace cut short (window_judge.cc): 1/k for
  // each of k candidate links at a position, a failure's expected share.
  std::vector<float> weights;
  std::vector<bool> is_link;  // per component: links explain untraced probes

  struct PairTotals {
    std::uint64_t traced = 0;     // all probes of the pair, traced
    std::uint64_t untraced = 0;   // all probes of the pair, untraced
    std::uint32_t rail_pair = 0;  // NIC pairs of one ECMP group (the same two rail switches)
    std::uint32_t src_rnic = 0;   // components of its two RNICs
    std::uint32_t dst_rnic = 0;
  };
  std::vector<PairTotals> pairs;
  std::size_t rail_pairs = 0;  // ECMP groups
  // The fabric paths probes of an ECMP group took in the window (traced,
  // failed or not): which groups' untraced probes a blamed component may fail.
  struct Route {
    std::uint32_t rail_pair = 0;
    std::uint32_t first = 0;  // into route_comps
    std::uint32_t size = 0;
  };
  std::vector<Route> routes;
  std::vector<std::uint32_t> route_comps;
  // Components whose unexplained loss rate estimates the ambient loss (the
  // directed fabric links): sequential_inference.h.
  std::vector<bool> ambient;

  // group_weights: parallel to group_comps, or empty (all 1).
  void AddGroup(std::uint32_t pair, std::uint32_t bad, bool traced,
                std::span<const std::uint32_t> group_comps,
                std::span<const float> group_weights = {});
  void AddRoute(std::uint32_t rail_pair, std::span<const std::uint32_t> comps);
  void Reset(std::size_t component_count);
};

struct InferenceParams {
  std::uint32_t min_failures = 3;
  double background = 0.001;
  double min_z = 4.0;
  std::uint32_t max_culprits = 64;
  // An RNIC with at least this many traced probes is judged on them alone.
  std::uint32_t min_traced = 50;
};

struct Culprit {
  std::uint32_t component = 0;
  std::uint64_t explained = 0;  // failures it explained when chosen
  std::uint64_t failures = 0;   // all failures through it
  std::uint64_t good = 0;
  double loss = 0;  // explained / (explained + good): its own loss estimate
  double z = 0;
  // Share of the failures through it that it alone explains, damped when the
  // evidence is barely significant: in [0, 1].
  double confidence = 0;
};

struct InferenceResult {
  std::vector<Culprit> culprits;  // in the order chosen (most evident first)
  // Per component: all failures through it, and after the culprits took
  // theirs, the unexplained ones (for ranking the rest).
  std::vector<std::uint64_t> failures;
  std::vector<double> residual;
  std::vector<double> score;  // residual x residual loss
};

// Per component, the failures through it (weighted: a cut-short trace's
// candidates share them), rounded into `out`; returns them unrounded.
std::vector<double> FailuresThrough(const InferenceProblem& p, std::vector<std::uint64_t>& out);

// Which untraced probes say nothing of their RNICs. An untraced 5-tuple's
// path is unknown, and ECMP may send it through any link between its two rail
// switches. When a link of that ECMP group (NIC pairs between the same two
// rail switches, pooled over hosts) is blamed, the group's untraced probes are
// ambiguous: their failures are explained (by the link, as far as the RNICs
// are concerned) and their successes do not count for the RNICs either. A
// group is affected when any of its routes in the window (the paths its
// traced probes took, failed or not) crosses the blamed link or switch.
// Estimating how many of them crossed the link from the traced ones is biased
// exactly when it matters: a gray link eats the traceroutes that cross it, so
// the 5-tuples it fails are the last to be traced, and the untraced ones of a
// window are mostly the failing ones; charging the RNICs with the excess
// blamed every RNIC of the fleet while a gray link lasted. RNICs are then
// judged on their traced probes and on the untraced ones of unaffected groups.
class UntracedExplainer {
 public:
  explicit UntracedExplainer(const InferenceProblem& p);
  // A network component (link, switch) was blamed: whether an ECMP group
  // became affected.
  bool Blamed(const InferenceProblem& p, std::uint32_t component);
  // After Blamed: untraced_explained (per group) and ambiguous_good (per
  // component: untraced successes that do not count).
  void Explain(const InferenceProblem& p, std::vector<double>& untraced_explained,
               std::vector<double>& ambiguous_good) const;

 private:
  std::vector<char> at_risk_;               // per ECMP group: a route crosses a blamed component
  std::vector<std::uint64_t> pair_failed_;  // per pair: untraced failures
};

// What both greedy inferences (Infer, InferSequential) keep while they pick
// culprits one by one: which failure groups the culprits chosen so far
// explain, and per component the failures left unexplained, traced and
// untraced, with the probes it is judged on.
class Unexplained {
 public:
  // An RNIC with fewer than min_traced traced probes is judged on its
  // untraced ones too (see Infer's header).
  Unexplained(const InferenceProblem& p, double min_traced);
  // Counts again what no culprit explains yet.
  void Recount();
  // `c` is a culprit: every group through it is explained.
  void Explain(std::uint32_t c);
  // The failures and probes `c` is judged on.
  std::pair<double, double> Counts(std::uint32_t c) const;
  // An RNIC judged on untraced probes (fewer than min_traced traced).
  bool OnUntraced(std::uint32_t c) const { return !p_.is_link[c] && traced_n_[c] < min_traced_; }
  double traced(std::uint32_t c) const { return ub_[c]; }
  double all(std::uint32_t c) const { return ub_[c] + ub_u_[c]; }
  // Per component, all its unexplained failures.
  std::vector<double> Residual() const;

 private:
  const InferenceProblem& p_;
  double min_traced_;
  UntracedExplainer untraced_;
  std::vector<char> explained_;             // per group
  std::vector<double> untraced_explained_;  // per group
  std::vector<double> ambiguous_good_;      // per component
  std::vector<double> ub_, ub_u_;           // per component: traced, untraced
  std::vector<double> traced_n_;            // per component: traced probes
};

InferenceResult Infer(InferenceProblem& problem, const InferenceParams& params);

// One-sided binomial z-score of `bad` failures in `n` probes against rate p0.
double BinomialZ(double bad, double n, double p0);

}  // namespace hostmesh::analysis
