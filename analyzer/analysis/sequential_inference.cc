#include "analyzer/analysis/sequential_inference.h"

#include <algorithm>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>

#include "analyzer/analysis/sequential_pass.h"

namespace hostmesh::analysis {

EvidenceBook::EvidenceBook(double prior_background)
    // The prior weighs like 10,000 probes: a few windows of data overrule it.
    : fail_(prior_background * 1e4), probes_(1e4) {}

EvidenceBook::Entry& EvidenceBook::At(std::uint64_t key) {
  auto [slot, inserted] = index_.Insert(key, static_cast<std::uint32_t>(entries_.size()));
  if (inserted) entries_.emplace_back();
  return entries_[*slot];
}

const EvidenceBook::Entry* EvidenceBook::Find(std::uint64_t key) const {
  const auto* slot = index_.Find(key);
  return slot ? &entries_[*slot] : nullptr;
}

double EvidenceBook::background(double floor) const {
  return std::max(floor, probes_ > 0 ? fail_ / probes_ : floor);
}

void EvidenceBook::AddBackground(double failures, double probes, double decay) {
  fail_ = fail_ * decay + failures;
  probes_ = probes_ * decay + probes;
}

double LogLikelihoodRatio(double bad, double n, double p0, double p1) {
  p1 = std::min(p1, 1.0 - 1e-9);
  return bad * std::log(p1 / p0) + (n - bad) * std::log((1 - p1) / (1 - p0));
}

double IndifferentBackground(double p0, double p1, double mid) {
  // Expected LLR per probe at `mid`; it falls as q0 rises towards mid.
  const auto drift = [&](double q0) { return LogLikelihoodRatio(mid, 1.0, q0, p1); };
  if (!(p0 < mid && mid < p1) || drift(p0) <= 0) return p0;
  double lo = p0, hi = mid;
  for (int i = 0; i < 60; ++i) {
    const double q = 0.5 * (lo + hi);
    (drift(q) > 0 ? lo : hi) = q;
  }
  return lo;
}

double PoissonLowerBound(double k, double chance) {
  if (k <= 0) return 0.0;
  // P(X >= k | lambda) = gamma_p(k, lambda) rises with lambda.
  return boost::math::gamma_p_inv(k, chance);
}

void EvidenceBook::Entry::PoolRate(double bad, double n, double keep, double alpha) {
  const double expected = rate_n > 0 ? n * rate_bad / rate_n : 0.0;
  // P(X >= bad) and P(X <= bad) at the pooled rate.
  const bool changed = alpha <= 0 || rate_n <= 0 || PoissonTail(bad, expected) < alpha ||
                       1 - PoissonTail(bad + 1, expected) < alpha;
  rate_bad = changed ? bad : rate_bad * keep + bad;
  rate_n = changed ? n : rate_n * keep + n;
}

namespace {
// A candidate's share of a cut-short path at or above which the path surely
// crossed it (weights are floats: shares that sum to 1 may fall just short).
constexpr float kSurely = 0.999f;
}  // namespace

namespace sequential_internal {

double Threshold(std::size_t components, const SequentialParams& params) {
  return std::log(static_cast<double>(std::max<std::size_t>(components, 1))) +
         std::log(1.0 / params.false_alarms_per_window);
}

SequentialPass::SequentialPass(InferenceProblem& p, std::span<const std::uint64_t> keys,
                               std::span<const std::vector<std::uint32_t>> parts,
                               const SequentialParams& params, EvidenceBook& book,
                               std::span<const std::uint32_t> units)
    : p_(p),
      keys_(keys),
      parts_(parts),
      units_(units),
      params_(params),
      book_(book),
      n_comp_(p.components),
      p0_(book.background(params.background_floor)),
      h_(Threshold(n_comp_, params)),
      cap_(h_ * params.cap_factor),
      window_alpha_(params.window_alpha / static_cast<double>(std::max<std::size_t>(n_comp_, 1))),
      // The CUSUM's H0 (header): zero drift at p0 + indifference x delta.
      q0_(IndifferentBackground(p0_, p0_ + params.min_loss, Indifferent())),
      blamed_(n_comp_, 0),
      deferred_(n_comp_, 0),
      traced_before_(TracedBefore()),
      left_(p, LeftOptions()) {
  result_.background = p0_;
  result_.threshold = h_;
  // The recovery test's bar (header): false releases as rare fleet-wide as
  // false alarms, over the culprits held coming into this window.
  std::size_t holding = 0;
  book_.ForEach([&holding](std::uint64_t, const EvidenceBook::Entry& e) { holding += e.culprit; });
  release_ = Threshold(holding, params);
}

// Per component, the failures of paths that surely crossed it (not as one of
// a cut-short trace's candidates): only these say, once others explain them
// all, that it was a redundant pick (UpdateTheRest, superseded).
void SequentialPass::CountSurelyCrossed() {
  surely_.assign(n_comp_, 0);
  for (const auto& g : p_.groups) {
    for (std::uint32_t i = 0; i < g.size; ++i) {
      if (p_.weights[g.first + i] >= kSurely) surely_[p_.comps[g.first + i]] += g.bad;
    }
  }
}

// Per RNIC, the traced counts of its CUSUM's run before this window.
std::vector<std::pair<double, double>> SequentialPass::TracedBefore() const {
  std::vector<std::pair<double, double>> before(n_comp_, {0.0, 0.0});
  for (std::uint32_t c = 0; c < n_comp_; ++c) {
    if (p_.is_link[c]) continue;
    if (const auto* e = book_.Find(keys_[c])) before[c] = {e->run_bad, e->run_n};
  }
  return before;
}

// The CUSUM's step for a window: its LLR of H1 against the H0 that keeps the
// drift zero at the indifference rate for the H1 the window surely shows
// (header). That is p0 + delta unless the window's rate, at the lower bound
// its failures make plausible (held_rate_confidence, as a held culprit's
// rate), is well above it; then q0 comes nearer p0, as the same zero-drift
// rule gives there. Against the fixed q0_, a 2.2% RNIC over 400 probes
// gained about half the evidence its window holds and was named a window
// late. From the point estimate instead, two chance failures over 150
// probes (H1 0.7%) weighed 3.9 nats each instead of 2.3, and named an RNIC
// beside a lossy one in 2 of 120 seeds of the lasting timeline.
double SequentialPass::CusumStep(const EvidenceBook::Entry* e, double bad, double n) const {
  const double p1 = H1(e, bad, n);
  const bool held = e != nullptr && e->culprit;
  // The lower bound is below the point estimate: no window whose H1 is p0 +
  // delta (nearly all of them) needs it.
  const double sure = held || p1 <= p0_ + params_.min_loss
                          ? p1
                          : Halfway(PoissonLowerBound(bad, 1 - params_.held_rate_confidence) / n);
  const double q0 =
      sure <= p0_ + params_.min_loss ? q0_ : IndifferentBackground(p0_, sure, Indifferent());
  return LogLikelihoodRatio(bad, n, q0, p1);
}

// Whether a candidate with `bad` of `n` unexplained qualifies: conclusive over
// the windows (its CUSUM with this window reaches h) or in this window alone,
// on `alone` (its counts but for an RNIC's untraced failures, which count
// towards the first only: Unexplained::Alone).
bool SequentialPass::Eligible(const EvidenceBook::Entry* e, double bad, double n,
                              std::pair<double, double> alone) const {
  const double s_new = std::clamp((e ? e->s : 0.0) + CusumStep(e, bad, n), 0.0, cap_);
  if (s_new >= h_) return true;
  const auto [a_bad, a_n] = alone;
  return a_bad >= params_.min_failures && a_n > 0 && a_bad / a_n >= p0_ + params_.min_loss &&
         PoissonTail(a_bad, a_n * p0_) < window_alpha_;
}

// The strongest candidate not blamed yet, into best_ (best_strength_ stays
// below 0 when there is none). Strength is evidence in nats; culprits of
// earlier windows that still qualify go first, among themselves by strength.
// Evidence that rests on untraced probes is the weakest kind: their failures
// may cross a fabric fault not chosen yet, which would make their ECMP
// groups ambiguous, or an RNIC at their other end that fails everything (an
// RNIC without a route, whose peers' untraced failures are all with it). So
// unless `full`, an RNIC is a candidate only if its traced probes alone
// qualify it; the rest are weighed on all their probes once no other
// candidate is left, and the one whose probes fail most explains the
// others' failures to it.
void SequentialPass::Pick(bool full) {
  best_strength_ = -1;
  best_held_ = false;
  for (std::uint32_t c = 0; c < n_comp_; ++c) {
    if (blamed_[c] || deferred_[c]) continue;
    const auto [bad, n] = Counts(c);
    if (n <= 0 || bad <= 0) continue;
    const auto* e = book_.Find(keys_[c]);
    if (!Eligible(e, bad, n, left_.Alone(c))) continue;
    const bool held = e != nullptr && e->culprit && !e->untraced;
    if (!full && !held && !p_.is_link[c]) {
      const auto [traced_bad, traced_n] = left_.Traced(c);
      if (!Eligible(e, traced_bad, traced_n)) continue;
    }
    // Candidates that explain the same failures tie on this window's
    // evidence (a 1% link's failures that all fell on the flows it shares
    // with a neighbour): the evidence of the windows before decides, which
    // the true fault has more of, since the neighbour's share of its
    // failures is all the neighbour has.
    const double strength = Strength(e, bad, n);
    // Culprits of earlier windows that still qualify explain first: a
    // window's chance shape (a burst on a small fault, a neighbour losing
    // too) must not hand a held fault's failures to its switch or to a
    // part of it. A wrong pick still goes: once the others explain what
    // it took, it no longer qualifies (for a switch: its loss no longer
    // spread), or its recovery test lets it go. A culprit named on untraced
    // failures alone (nothing traced yet) has not earned that: the links
    // its paths cross were not in view, and the first traces may show one
    // of them explains it all (a gray link's far direction named its
    // rail's every RNIC, then kept them named for as long as it lasted).
    if (held < best_held_ || (held == best_held_ && strength <= best_strength_)) continue;
    if (held && HeldPartWaiting(c)) continue;
    if (Spread(c)) {
      best_ = c;
      best_strength_ = strength;
      best_held_ = held;
    }
  }
}

// Greedy: the strongest candidate explains its failures, then the next.
void SequentialPass::ChooseGreedily() {
  for (;;) {
    left_.Recount();
    if (chosen_.size() >= params_.max_culprits) break;
    Pick(false);
    if (best_strength_ < 0) Pick(true);
    if (best_strength_ < 0) break;
    if (DeferTie()) continue;
    const auto [bad, n] = Counts(best_);
    const auto [traced_bad, traced_n] = left_.Traced(best_);
    chosen_.push_back(
        {best_, bad, n, left_.OnUntraced(best_) && left_.traced(best_) <= 0, traced_bad, traced_n});
    blamed_[best_] = 1;
    left_.Explain(best_);
  }
}

void SequentialPass::Report(std::uint32_t c, double bad, double n, const EvidenceBook::Entry& e) {
  Culprit cul;
  cul.component = c;
  cul.explained = static_cast<std::uint64_t>(std::llround(bad));
  cul.failures = out().failures[c];
  cul.good = static_cast<std::uint64_t>(std::llround(std::max(0.0, n - bad)));
  cul.loss = e.rate_n > 0 ? e.rate_bad / e.rate_n : 0.0;
  cul.z = e.s;
  const double share = cul.failures ? bad / static_cast<double>(cul.failures) : 1.0;
  cul.confidence = std::clamp(share, 0.0, 1.0) * std::min(1.0, e.s / h_);
  out().culprits.push_back(cul);
}

// A chosen component's evidence, with the failures it explained.
void SequentialPass::UpdateChosen() {
  for (const Chosen& ch : chosen_) {
    EvidenceBook::Entry& e = book_.At(keys_[ch.c]);
    const bool fresh = !e.culprit;
    // A held culprit chosen again starts its recovery test anew only when
    // the window's failures are beyond chance at the background (window_alpha):
    // then it surely still fails. A failure or two over its probes may be
    // background (0.4 a window over 400 probes at 1e-3), and restarting on
    // each, the test of a fault that had ended started over about one window
    // in three; such a window is weighed like any other.
    const bool failing_still = PoissonTail(ch.bad, ch.n * p0_) < params_.window_alpha;
    const double r = fresh || failing_still ? 0.0 : Recovered(e, ch.bad, ch.n);
    e.s = std::clamp(e.s + CusumStep(&e, ch.bad, ch.n), 0.0, cap_);
    if (r >= release_) {
      if (!p_.is_link[ch.c]) e.PoolRun(ch.traced_bad, ch.traced_n);
      LetGo(e);
      continue;
    }
    e.PoolHeld(ch.bad, ch.n, fresh ? 0.0 : params_.held_rate_decay);
    e.PoolRate(ch.bad, ch.n, params_.held_rate_decay, fresh ? 0.0 : params_.window_alpha);
    e.failing =
        std::min(1.0, PoissonLowerBound(e.held_bad, 1 - params_.held_rate_confidence) / e.held_n);
    e.s = std::max(e.s, h_);
    if (!p_.is_link[ch.c]) e.PoolRun(ch.traced_bad, ch.traced_n);
    e.r = r;
    e.culprit = true;
    e.untraced = ch.untraced;
    e.windows = fresh ? 1 : e.windows + 1;
    e.unobserved = 0;
    e.deferred = false;
    Report(ch.c, ch.bad, ch.n, e);
    result_.fresh.push_back(fresh);
  }
}

// Whether a held culprit left no failure by the window's other culprits is
// superseded: when one of them is its switch or part of it (two accounts of
// the same failures, and the window preferred the other: a rail switch named
// on a first window where a link's and a spine's failures looked spread over
// it), or when none left is on its own as conclusive as its recovery test
// asks, at the rate it is held at (a 3% link named before its spine expects a
// dozen over 400 probes). A 1% RNIC that a 1% link's paths cross a quarter
// of expects three failures of its own, and none about one window in twenty:
// let go then, evidence and all, it was named again minutes later, one
// incident per stretch. Otherwise the window counts as a quiet one.
bool SequentialPass::KinChosen(std::uint32_t c) const {
  return std::any_of(chosen_.begin(), chosen_.end(),
                     [&](const Chosen& ch) { return ch.c != c && Related(c, ch.c); });
}

bool SequentialPass::NoneLeftIsConclusive(const EvidenceBook::Entry& e, double n) const {
  return LogLikelihoodRatio(0, n, p0_, HeldRate(e)) <= -release_;
}

// Every other component's evidence, with what is left for it.
void SequentialPass::UpdateTheRest() {
  for (std::uint32_t c = 0; c < n_comp_; ++c) {
    if (blamed_[c]) continue;
    if (deferred_[c]) {
      // The window's failures are evidence that one of the tied is at fault,
      // not that each is: credited to both, either could be named next window
      // on any failure at all, which a fault's chance neighbour then was.
      book_.At(keys_[c]).deferred = true;
      continue;
    }
    const auto [bad, n] = Counts(c);
    const auto* known = book_.Find(keys_[c]);
    if (known == nullptr && (n <= 0 || bad <= 0)) continue;  // nothing to remember
    EvidenceBook::Entry& e = book_.At(keys_[c]);
    e.deferred = false;
    if (n <= 0) {
      // Not observed: a culprit nobody's probes cross any more is held for a
      // while (its incident stays open), then let go.
      if (e.culprit && ++e.unobserved >= params_.max_unobserved_windows) e.culprit = false;
      if (e.culprit) Report(c, 0, 0, e);
      continue;
    }
    e.unobserved = 0;
    if (e.culprit && bad <= 0 && surely_[c] > 0 && (KinChosen(c) || NoneLeftIsConclusive(e, n))) {
      // Superseded: failures surely crossed it, and components chosen in this
      // window explained every one (a link named before the lossy spine it is
      // part of was conclusive). A wrong early pick is let go at once, with
      // its evidence, rather than held while its CUSUM drains. Failures it
      // was only a candidate for (a cut-short trace) say nothing of that: a
      // lossier candidate explains them first, and the window counts for it
      // as one without failures, against its hysteresis and recovery test.
      e.culprit = false;
      e.s = 0;
      e.PoolRun(0, 0);
      continue;
    }
    e.s = std::clamp(e.s + CusumStep(&e, bad, n), 0.0, cap_);
    if (!p_.is_link[c]) {
      const auto [traced_bad, traced_n] = left_.Traced(c);
      e.PoolRun(traced_bad, traced_n);
    }
    if (!e.culprit) continue;
    // Held while the evidence holds (hysteresis), with what is left for it,
    // until its windows say it is back at p0.
    e.r = Recovered(e, bad, n);
    if (e.s < h_ * params_.off_fraction || e.r >= release_) {
      LetGo(e);
      continue;
    }
    // Pooled, but `failing` is refreshed only when it is chosen again: its
    // quiet windows lower the rate it is tested at from then on, not the
    // recovery they are evidence of.
    e.PoolHeld(bad, n, params_.held_rate_decay);
    e.PoolRate(bad, n, params_.held_rate_decay, params_.window_alpha);
    ++e.windows;
    Report(c, bad, n, e);
    result_.fresh.push_back(false);
  }
}

// The spread test's memory: what each component has left unexplained by the
// culprits that are no switch (a link or RNIC named on its own took its
// failures; a switch named for a link's failures must not hide them).
void SequentialPass::RememberForSpread() {
  Unexplained beside_switches(p_, LeftOptions());
  for (const Chosen& ch : chosen_) {
    if (!HasParts(ch.c)) beside_switches.Explain(ch.c);
  }
  beside_switches.Recount();
  for (std::uint32_t c = 0; c < n_comp_; ++c) {
    const auto [bad, n] = beside_switches.Counts(c);
    EvidenceBook::Entry* e = book_.FindMutable(keys_[c]);
    if (e == nullptr) {
      if (n <= 0) continue;
      e = &book_.At(keys_[c]);
    }
    e->past_bad = e->past_bad * params_.spread_decay + bad;
    e->past_n = e->past_n * params_.spread_decay + n;
  }
}

// The ambient loss: the pooled unexplained loss rate of the directed fabric
// links, leaving out culprits and links gathering evidence (S above h/2):
// faults not yet conclusive must not raise the bar they are judged against.
void SequentialPass::UpdateBackground() {
  double ambient_bad = 0, ambient_n = 0;
  for (std::uint32_t c = 0; c < n_comp_; ++c) {
    if (!p_.ambient[c] || blamed_[c] || deferred_[c]) continue;
    const auto* e = book_.Find(keys_[c]);
    if (e != nullptr && (e->culprit || e->s > h_ / 2)) continue;
    const auto [bad, n] = Counts(c);
    ambient_bad += bad;
    ambient_n += n;
  }
  if (ambient_n > 0) book_.AddBackground(ambient_bad, ambient_n, params_.background_decay);
}

void SequentialPass::Score() {
  out().score.resize(n_comp_);
  for (std::uint32_t c = 0; c < n_comp_; ++c) {
    const auto [bad, n] = Counts(c);
    out().score[c] = n > 0 ? bad * (bad / n) : 0.0;
  }
  out().residual = left_.Residual();
}

}  // namespace sequential_internal

SequentialResult InferSequential(InferenceProblem& p, std::span<const std::uint64_t> keys,
                                 std::span<const std::vector<std::uint32_t>> parts,
                                 const SequentialParams& params, EvidenceBook& book,
                                 std::span<const std::uint32_t> units) {
  return sequential_internal::SequentialPass(p, keys, parts, params, book, units).Run();
}

}  // namespace hostmesh::analysis
