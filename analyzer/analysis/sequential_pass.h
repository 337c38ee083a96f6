#pragma once

// InferSequential's window pass (sequential_inference.h), split by phase:
// picking culprits (sequential_inference.cc), weighing switches against their
// parts (sequential_wholes.cc) and rivals that explain the same failures
// (sequential_ties.cc). Internal to those files.

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "analyzer/analysis/sequential_inference.h"

namespace hostmesh::analysis::sequential_internal {

// ln(components) + ln(1 / false alarms per window): the CUSUM's threshold h.
double Threshold(std::size_t components, const SequentialParams& params);

// One window of InferSequential, phase by phase over the state they share.
class SequentialPass {
 public:
  SequentialPass(InferenceProblem& p, std::span<const std::uint64_t> keys,
                 std::span<const std::vector<std::uint32_t>> parts, const SequentialParams& params,
                 EvidenceBook& book, std::span<const std::uint32_t> units);

  SequentialResult Run() {
    FailuresThrough(p_, out().failures);
    CountSurelyCrossed();
    ChooseGreedily();
    MergePartsIntoWholes();
    PreferWholes();
    UpdateChosen();
    UpdateTheRest();
    RememberForSpread();
    UpdateBackground();
    Score();
    return std::move(result_);
  }

 private:
  struct Chosen {
    std::uint32_t c;
    double bad, n;
    bool untraced = false;                // on untraced failures alone
    double traced_bad = 0, traced_n = 0;  // of its counts, the traced ones
  };

  InferenceResult& out() { return result_.inference; }
  // How the pass counts what is left unexplained (loss_inference.h): an
  // RNIC on its untraced probes too, as far as its traced ones corroborate
  // them; an ECMP group's untraced probes ambiguous once the blamed add more
  // loss to them than the CUSUM's indifference excess.
  Unexplained::Options LeftOptions() const {
    return {.min_traced = static_cast<double>(params_.min_traced),
            .ambiguous_above = params_.indifference * params_.min_loss,
            .corroborate = true,
            .background = p0_,
            .min_corroborating = static_cast<double>(params_.min_failures),
            .traced_before = &traced_before_,
            .peers = true};
  }
  std::pair<double, double> Counts(std::uint32_t c) const { return left_.Counts(c); }
  bool HasParts(std::uint32_t c) const { return c < parts_.size() && !parts_[c].empty(); }
  // Whether `part` is one of switch `whole`'s parts.
  bool IsPartOf(std::uint32_t whole, std::uint32_t part) const;
  // The component standing for the thing c is part of (a link's direction:
  // the link both ways); c itself without units.
  std::uint32_t UnitOf(std::uint32_t c) const { return c < units_.size() ? units_[c] : c; }
  // Whether the unit of `part` (any of its components) is chosen.
  bool UnitChosen(std::uint32_t whole, std::uint32_t part) const;

  // A held culprit's rate in its hysteresis and recovery test (H1, below).
  double HeldRate(const EvidenceBook::Entry& e) const {
    return std::max(p0_ + params_.min_loss, e.failing);
  }
  // Its recovery test after a window: R <- max(0, R - LLR at that rate).
  double Recovered(const EvidenceBook::Entry& e, double bad, double n) const {
    return std::max(0.0, e.r - LogLikelihoodRatio(bad, n, p0_, HeldRate(e)));
  }
  // Lets a held culprit go: its hysteresis down to the bar it held at, its
  // recovery test done.
  void LetGo(EvidenceBook::Entry& e) const {
    e.culprit = false;
    e.s = std::min(e.s, h_ * params_.off_fraction);
    e.r = 0;
  }

  // H1: for a culprit, the rate it surely loses at (as in its recovery test:
  // against its latest estimate, inflated by the burst that named it, a quiet
  // window or two drained its hysteresis); for the rest, halfway from p0 to
  // this window's loss, and at least p0 + delta: a 3% fault gains evidence as
  // a fault of its size (a damped generalized likelihood ratio), while the
  // noise of a healthy component's windows rarely moves H1 off p0 + delta.
  double H1(const EvidenceBook::Entry* e, double bad, double n) const {
    if (e != nullptr && e->culprit) return HeldRate(*e);
    return Halfway(n > 0 ? bad / n : 0.0);
  }
  double Halfway(double loss) const { return p0_ + std::max(params_.min_loss, (loss - p0_) / 2); }

  // The rate at which the CUSUM's drift is zero (header): p0 + indifference x delta.
  double Indifferent() const { return p0_ + params_.indifference * params_.min_loss; }
  double CusumStep(const EvidenceBook::Entry* e, double bad, double n) const;

  // Evidence in nats of `bad` failures in `n` probes, at their own loss rate.
  double Gain(double bad, double n) const {
    if (n <= 0 || bad <= 0) return 0.0;
    return std::max(0.0, LogLikelihoodRatio(bad, n, p0_, bad / n));
  }
  // What candidates are ranked by: this window's evidence plus the CUSUM
  // brought in (not the new CUSUM, which saturates at the cap, where a
  // switch and its links would tie).
  double Strength(const EvidenceBook::Entry* e, double bad, double n) const {
    return Gain(bad, n) + (e ? e->s : 0.0);
  }

  void CountSurelyCrossed();
  std::pair<double, double> WithPast(std::uint32_t c, const Unexplained& left) const;
  std::pair<double, double> OwnWithPast(std::uint32_t c, const Unexplained& left) const;
  bool Spread(std::uint32_t c) const { return Spread(c, left_); }
  bool Spread(std::uint32_t c, const Unexplained& left) const;
  bool Eligible(const EvidenceBook::Entry* e, double bad, double n,
                std::pair<double, double> alone) const;
  bool Eligible(const EvidenceBook::Entry* e, double bad, double n) const {
    return Eligible(e, bad, n, {bad, n});
  }
  bool HeldPartWaiting(std::uint32_t c) const;
  // A switch against its endpoints (sequential_endpoints.cc).
  std::vector<double> ShareThrough(std::uint32_t c) const;
  // Calls f(group, weight of s in it) for each unexplained traced group through s.
  template <typename F>
  void ForFailedThrough(std::uint32_t s, const Unexplained& left, F&& f) const;
  // The weight with which group g holds c (0: not at all).
  double WeightIn(const InferenceProblem::Group& g, std::uint32_t c) const;
  // RNIC r's traced probes through s, and elsewhere but for the pairs with a
  // blamed RNIC at the other end.
  std::pair<double, double> ProbesOf(std::uint32_t r, std::span<const double> share) const;
  std::vector<std::uint32_t> EndsOf(std::uint32_t s, const Unexplained& left) const;
  // A component's traced failures and probes in the window.
  struct Tally {
    std::uint32_t c;
    double bad, n;
  };
  Tally TallyOf(std::uint32_t c) const;
  double RateElsewhere(std::uint32_t r, std::uint32_t s, double n, std::span<const Tally> culprits,
                       const Unexplained& left) const;
  bool EndpointsExplain(std::uint32_t s, const Unexplained& left) const;
  void Pick(bool full);
  bool Related(std::uint32_t a, std::uint32_t b) const;
  std::vector<std::uint32_t> Rivals() const;
  bool NoCaseLeft(std::uint32_t other, const Unexplained& left) const;
  bool TakesCaseOf(std::uint32_t c, std::uint32_t other) const;
  bool DeferTie();
  void ChooseGreedily();
  void MergePartsIntoWholes();
  void PreferWholes();
  std::size_t ChosenUnits(std::uint32_t whole) const;
  bool TryWhole(std::uint32_t whole);
  bool SomePartClean(std::uint32_t whole, const Unexplained& left) const;
  void Report(std::uint32_t c, double bad, double n, const EvidenceBook::Entry& e);
  void UpdateChosen();
  bool KinChosen(std::uint32_t c) const;
  bool NoneLeftIsConclusive(const EvidenceBook::Entry& e, double n) const;
  void UpdateTheRest();
  std::vector<std::pair<double, double>> TracedBefore() const;
  void RememberForSpread();
  void UpdateBackground();
  void Score();

  // Per RNIC component, its pairs and its traced failure groups (index
  // lists into p_.pairs and p_.groups), built when a switch is first weighed
  // against its endpoints (EndpointsExplain).
  struct RnicIncidence {
    bool built = false;
    std::vector<std::uint32_t> pair_first, pairs, group_first, groups;
    void Build(const InferenceProblem& p);
  };

  InferenceProblem& p_;
  const std::span<const std::uint64_t> keys_;
  const std::span<const std::vector<std::uint32_t>> parts_;
  const std::span<const std::uint32_t> units_;
  const SequentialParams& params_;
  EvidenceBook& book_;
  const std::size_t n_comp_;
  const double p0_;
  const double h_;
  const double cap_;
  const double window_alpha_;
  const double q0_;
  double release_ = 0;
  SequentialResult result_;
  std::vector<char> blamed_;
  // Tied with a rival in this window (DeferTie).
  std::vector<char> deferred_;
  // Per RNIC, its traced counts over its CUSUM's run (EvidenceBook::Entry).
  std::vector<std::pair<double, double>> traced_before_;
  Unexplained left_;
  // Per component, the failures of paths that surely crossed it.
  std::vector<double> surely_;
  std::vector<Chosen> chosen_;
  mutable RnicIncidence incidence_;
  // The candidate Pick found.
  std::uint32_t best_ = 0;
  double best_strength_ = -1;
  bool best_held_ = false;
};

}  // namespace hostmesh::analysis::sequential_internal
