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
//  - Untraced probes only tell their two RNICs, less what the blamed links
//    and switches their 5-tuples may cross add to them (UntracedExplainer).
//    This window inference judges an RNIC with enough traced probes on those
//    alone and counts untraced ones only for an RNIC with few; the
//    sequential one judges every RNIC on both, its untraced failures counted
//    as far as its traced ones bear them out (Unexplained).
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
    double probes = 1;  // the window's traced probes on it, failed or not
  };
  std::vector<Route> routes;
  std::vector<std::uint32_t> route_comps;
  // Parallel to route_comps: the chance the route crosses the component (1,
  // or 1/k for each of k candidates of a trace cut short).
  std::vector<float> route_weights;
  // Components whose unexplained loss rate estimates the ambient loss (the
  // directed fabric links): sequential_inference.h.
  std::vector<bool> ambient;

  // group_weights: parallel to group_comps, or empty (all 1).
  void AddGroup(std::uint32_t pair, std::uint32_t bad, bool traced,
                std::span<const std::uint32_t> group_comps,
                std::span<const float> group_weights = {});
  // route_weights: parallel to comps, or empty (all 1).
  void AddRoute(std::uint32_t rail_pair, std::span<const std::uint32_t> comps,
                std::span<const float> route_weights = {}, double probes = 1);
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
// switches. A blamed link or switch adds to the loss of an ECMP group's (NIC
// pairs between the same two rail switches, pooled over hosts) untraced
// probes its share of the group's routes in the window (the paths its traced
// probes took, failed or not; a cut-short trace's k candidates 1/k each)
// times its loss: the group's added loss, summed over the blamed.
//  - Above `ambiguous_above`, the group's untraced probes are ambiguous:
//    their failures are explained (by the blamed, as far as the RNICs are
//    concerned) and their successes do not count for the RNICs either.
//    Estimating how many of them crossed a gray link from the traced ones is
//    biased exactly when it matters: a gray link eats the traceroutes that
//    cross it, so the 5-tuples it fails are the last to be traced, and the
//    untraced ones of a window are mostly the failing ones; charging the
//    RNICs with the excess blamed every RNIC of the fleet while a gray link
//    lasted.
//  - At or below it, the group's untraced probes still tell their RNICs, less
//    the added loss's expected failures: a lossy spine of 32 crosses a 32nd
//    of every group, and made every RNIC of a 10,000-host fleet ambiguous,
//    so that RNIC faults went unnamed for as long as it lasted. The
//    sequential inference sets the bar at the excess its CUSUM is
//    indifferent to (sequential_inference.h): even unsubtracted, an added
//    loss that small drains an RNIC's evidence rather than building it.
// RNICs are then judged on their traced probes and on what is left of the
// untraced ones. ambiguous_above = 0: any share makes a group ambiguous.
class UntracedExplainer {
 public:
  // peers: a pair's untraced failures its ECMP group's other pairs make
  // expected are explained too (PeerExpected).
  UntracedExplainer(const InferenceProblem& p, double ambiguous_above, bool peers = false);
  // A network component (link, switch) losing at `loss` was blamed: whether
  // an ECMP group's added loss changed.
  bool Blamed(const InferenceProblem& p, std::uint32_t component, double loss);
  // After Blamed: untraced_explained (per group) and ambiguous_good (per
  // component: untraced successes that do not count).
  void Explain(const InferenceProblem& p, std::vector<double>& untraced_explained,
               std::vector<double>& ambiguous_good) const;

 private:
  double ambiguous_above_ = 0;
  bool peers_ = false;
  std::vector<double> added_;               // per ECMP group: loss the blamed add
  std::vector<double> probes_;              // per ECMP group: traced probes of its routes
  std::vector<std::uint64_t> pair_failed_;  // per pair: untraced failures
  // Per ECMP group: untraced failures and probes of all its pairs (what a
  // pair's peers in the group lose: PeerExpected).
  std::vector<double> group_failed_, group_probes_;
  double PeerExpected(const InferenceProblem& p, std::uint32_t pair) const;
};

// What both greedy inferences (Infer, InferSequential) keep while they pick
// culprits one by one: which failure groups the culprits chosen so far
// explain, and per component the failures left unexplained, traced and
// untraced, with the probes it is judged on.
class Unexplained {
 public:
  struct Options {
    // An RNIC with fewer traced probes ranks as judged on untraced ones
    // (OnUntraced); with `corroborate` off it is also the only kind judged
    // on them (Infer's header).
    double min_traced = 50;
    double ambiguous_above = 0;  // UntracedExplainer
    // An RNIC with enough traced probes judged on its untraced ones too,
    // when its traced failures are beyond chance at `background`, and as
    // many as those make plausible (CountUntraced).
    bool corroborate = false;
    double background = 1e-3;
    double min_corroborating = 1;  // traced failures, at least
    // Per component, traced failures and probes of earlier windows that
    // corroborate too (the sequential test's current run); none if null.
    const std::vector<std::pair<double, double>>* traced_before = nullptr;
    // A pair's untraced failures that its ECMP group's peers make expected
    // are not its RNICs' (UntracedExplainer::PeerExpected).
    bool peers = false;
  };
  explicit Unexplained(const InferenceProblem& p, const Options& options);
  // Counts again what no culprit explains yet.
  void Recount();
  // `c` is a culprit: every group through it is explained.
  void Explain(std::uint32_t c);
  // The failures and probes `c` is judged on.
  std::pair<double, double> Counts(std::uint32_t c) const;
  // The same but for an RNIC's corroborated untraced failures: what one
  // window alone must show to be conclusive. A few untraced 5-tuples lost
  // in a burst (a blackhole's ports) are three or more failures, conclusive
  // on a clean fabric; as evidence over windows they weigh as they should.
  std::pair<double, double> Alone(std::uint32_t c) const {
    return corroborated_[c] ? Traced(c) : Counts(c);
  }
  // Its unexplained traced failures and its traced probes.
  std::pair<double, double> Traced(std::uint32_t c) const {
    return {ub_[c], ub_[c] + static_cast<double>(p_.good[c])};
  }
  // An RNIC judged on untraced probes (fewer than min_traced traced).
  bool OnUntraced(std::uint32_t c) const {
    return !p_.is_link[c] && traced_n_[c] < options_.min_traced;
  }
  // Whether a culprit explains group `gi` (p.groups).
  bool Explained(std::size_t gi) const { return explained_[gi] != 0; }
  double traced(std::uint32_t c) const { return ub_[c]; }
  double all(std::uint32_t c) const { return ub_[c] + ub_u_[c]; }
  // Per component, all its unexplained failures.
  std::vector<double> Residual() const;

 private:
  void CountUntraced();

  const InferenceProblem& p_;
  Options options_;
  UntracedExplainer untraced_;
  std::vector<double> through_;             // per component: failures through it
  std::vector<char> explained_;             // per group
  std::vector<double> untraced_explained_;  // per group
  std::vector<double> ambiguous_good_;      // per component
  std::vector<double> ub_, ub_u_;           // per component: traced, untraced
  std::vector<double> counted_u_;           // per RNIC: untraced failures it is judged on
  std::vector<char> corroborated_;          // per RNIC: judged on untraced probes too
  std::vector<double> traced_n_;            // per component: traced probes
};

InferenceResult Infer(InferenceProblem& problem, const InferenceParams& params);

// P(X >= k) for X ~ Poisson(lambda).
double PoissonTail(double k, double lambda);
// The largest Poisson mean under which k or fewer events have a chance of at
// least 1 - `confidence`: an upper confidence bound on the mean.
double PoissonUpperBound(double k, double confidence);

// One-sided binomial z-score of `bad` failures in `n` probes against rate p0.
double BinomialZ(double bad, double n, double p0);

}  // namespace hostmesh::analysis
