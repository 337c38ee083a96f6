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
//  - Untraced probes only tell their two RNICs. They are explained in
//    proportion to what the traced probes of the same NIC pair show: if 25% of
//    the pair's traced probes fail through a blamed link, 25% of its untraced
//    probes are taken to fail there too. An RNIC with enough traced probes is
//    judged on those alone (its untraced failures are ambiguous); only an RNIC
//    with few traced probes is judged on the untraced excess.
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
    bool traced = false;     // untraced: comps are the two RNICs only
    bool link_part = false;  // filled by Infer: crossed a blamed link
  };
  std::vector<Group> groups;
  std::vector<std::uint32_t> comps;
  std::vector<bool> is_link;  // per component: links explain untraced probes

  struct PairTotals {
    std::uint64_t traced = 0;     // all probes of the pair, traced
    std::uint64_t untraced = 0;   // all probes of the pair, untraced
    std::uint32_t rail_pair = 0;  // NIC pairs of one ECMP group (the same two rail switches)
  };
  std::vector<PairTotals> pairs;
  std::size_t rail_pairs = 0;  // ECMP groups
  // Components whose unexplained loss rate estimates the ambient loss (the
  // directed fabric links): sequential_inference.h.
  std::vector<bool> ambient;

  void AddGroup(std::uint32_t pair, std::uint32_t bad, bool traced,
                std::span<const std::uint32_t> group_comps);
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

// How many of the untraced probes' failures the blamed links explain. An
// untraced 5-tuple's path is unknown, but ECMP spreads every 5-tuple between
// the same two rail switches alike, so it fails through blamed links as often
// as the traced probes of all NIC pairs of that ECMP group do. (The NIC pair's
// own traced 5-tuples are other 5-tuples: the handful of them says nothing
// about where these hash, and on a large fleet most pairs' traced ones miss
// a given uplink, which left their untraced failures to indict the RNICs.)
class UntracedExplainer {
 public:
  explicit UntracedExplainer(const InferenceProblem& p);
  // A traced group newly found to cross a blamed link.
  void CrossedBlamedLink(const InferenceProblem& p, const InferenceProblem::Group& g);
  // Recomputes untraced_explained (per group) after CrossedBlamedLink calls.
  void Explain(const InferenceProblem& p, std::vector<double>& untraced_explained) const;

 private:
  std::vector<double> link_failures_;  // per ECMP group
  std::vector<double> traced_;
};

InferenceResult Infer(InferenceProblem& problem, const InferenceParams& params);

// One-sided binomial z-score of `bad` failures in `n` probes against rate p0.
double BinomialZ(double bad, double n, double p0);

}  // namespace hostmesh::analysis
