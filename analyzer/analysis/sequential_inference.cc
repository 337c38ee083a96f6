#include "analyzer/analysis/sequential_inference.h"

#include <algorithm>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>

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

double PoissonTail(double k, double lambda) {
  if (k <= 0) return 1.0;
  if (lambda <= 0) return 0.0;
  return boost::math::gamma_p(k, lambda);
}

double PoissonLowerBound(double k, double chance) {
  if (k <= 0) return 0.0;
  // P(X >= k | lambda) = gamma_p(k, lambda) rises with lambda.
  return boost::math::gamma_p_inv(k, chance);
}

namespace {
// How unlikely, at its switch's loss rate, a part's failures must be (over
// all the switch's parts) for the loss to count as concentrated on it.
constexpr double kConcentrated = 1e-3;
// A candidate's share of a cut-short path at or above which the path surely
// crossed it (weights are floats: shares that sum to 1 may fall just short).
constexpr float kSurely = 0.999f;

// Whether part_bad of part_n probes through one of `parts` parts of a switch
// losing `loss` are concentrated there: more than 2.5 times the switch's rate,
// and more than a lossy switch would make the worst of its parts lose by
// chance (a part's probes are a fraction of the switch's, and fewer still
// while tracing lags behind rotation).
bool Concentrated(double part_bad, double part_n, double loss, std::size_t parts) {
  const double chance = kConcentrated / static_cast<double>(std::max<std::size_t>(parts, 1));
  return part_n > 0 && part_bad / part_n > 2.5 * loss &&
         PoissonTail(part_bad, loss * part_n) < chance;
}

// The log-likelihood ratio of "one part loses at its own rate, the rest of
// the switch's probes at the background p0" against "all of the switch's
// probes lose at one rate": one free rate each, so neither is favoured for
// having more. Each side against the switch's rate, on its own probes.
double ConcentratedLikelihood(double part_bad, double part_n, double rest_bad, double rest_n,
                              double p0) {
  if (part_bad <= 0 || part_n <= 0) return 0.0;
  // Below 1 (as LogLikelihoodRatio keeps its H1): a switch losing everything
  // is spread, not a division by zero.
  const double loss = std::min((part_bad + rest_bad) / (part_n + rest_n), 1.0 - 1e-9);
  return LogLikelihoodRatio(part_bad, part_n, loss, part_bad / part_n) +
         LogLikelihoodRatio(rest_bad, rest_n, loss, p0);
}
}  // namespace

namespace {

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
    bool untraced = false;  // on untraced failures alone
  };

  InferenceResult& out() { return result_.inference; }
  std::pair<double, double> Counts(std::uint32_t c) const { return left_.Counts(c); }
  bool HasParts(std::uint32_t c) const { return c < parts_.size() && !parts_[c].empty(); }
  // The component standing for the thing c is part of (a link's direction:
  // the link both ways); c itself without units.
  std::uint32_t UnitOf(std::uint32_t c) const { return c < units_.size() ? units_[c] : c; }
  // Whether the unit of `part` (any of its components) is chosen.
  bool UnitChosen(std::uint32_t whole, std::uint32_t part) const;

  // H1: for a culprit, the rate it surely loses at (as in its recovery test:
  // against its latest estimate, inflated by the burst that named it, a quiet
  // window or two drained its hysteresis); for the rest, halfway from p0 to
  // this window's loss, and at least p0 + delta: a 3% fault gains evidence as
  // a fault of its size (a damped generalized likelihood ratio), while the
  // noise of a healthy component's windows rarely moves H1 off p0 + delta.
  double H1(const EvidenceBook::Entry* e, double bad, double n) const {
    if (e != nullptr && e->culprit) return std::max(p0_ + params_.min_loss, e->failing);
    const double loss = n > 0 ? bad / n : 0.0;
    return p0_ + std::max(params_.min_loss, (loss - p0_) / 2);
  }

  // Evidence in nats of `bad` failures in `n` probes, at their own loss rate.
  double Gain(double bad, double n) const {
    if (n <= 0 || bad <= 0) return 0.0;
    return std::max(0.0, LogLikelihoodRatio(bad, n, p0_, bad / n));
  }

  void CountSurelyCrossed();
  std::pair<double, double> WithPast(std::uint32_t c, const Unexplained& left) const;
  bool Spread(std::uint32_t c) const { return Spread(c, left_); }
  bool Spread(std::uint32_t c, const Unexplained& left) const;
  bool Eligible(const EvidenceBook::Entry* e, double bad, double n) const;
  bool HeldPartWaiting(std::uint32_t c) const;
  void Pick(bool full);
  void ChooseGreedily();
  void MergePartsIntoWholes();
  void PreferWholes();
  std::size_t ChosenUnits(std::uint32_t whole) const;
  bool TryWhole(std::uint32_t whole);
  bool SomePartClean(std::uint32_t whole, const Unexplained& left) const;
  void Report(std::uint32_t c, double bad, double n, const EvidenceBook::Entry& e);
  void UpdateChosen();
  void UpdateTheRest();
  void RememberForSpread();
  void UpdateBackground();
  void Score();

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
  Unexplained left_;
  // Per component, the failures of paths that surely crossed it.
  std::vector<double> surely_;
  std::vector<Chosen> chosen_;
  // The candidate Pick found.
  std::uint32_t best_ = 0;
  double best_strength_ = -1;
  bool best_held_ = false;
};

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
      q0_(IndifferentBackground(p0_, p0_ + params.min_loss,
                                p0_ + params.indifference * params.min_loss)),
      blamed_(n_comp_, 0),
      left_(p, params.min_traced) {
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

// Judged on the window's counts with the past windows' (spread_decay): one
// window of a 1% link rarely holds the failures to show them concentrated.
std::pair<double, double> SequentialPass::WithPast(std::uint32_t c, const Unexplained& left) const {
  auto [bad, n] = left.Counts(c);
  if (const auto* e = book_.Find(keys_[c])) {
    bad += e->past_bad;
    n += e->past_n;
  }
  return {bad, n};
}

// A component made of parts (a switch: its links and RNICs) is blamed only
// when its loss is spread over them: its strongest part loses at most 2.5
// times the switch's rate, and without that part the rest still loses at
// least half of it, each up to chance (kConcentrated). A fault on one link or
// RNIC (or two) under a switch concentrates its loss; a lossy switch loses
// evenly everywhere.
bool SequentialPass::Spread(std::uint32_t c, const Unexplained& left) const {
  if (!HasParts(c)) return true;
  if (left.Counts(c).first <= 0) return false;
  const auto [bad, n] = WithPast(c, left);
  if (n <= 0 || bad <= 0) return false;
  double best_part = -1, part_bad = 0, part_n = 0;
  for (const std::uint32_t part : parts_[c]) {
    const auto [pb, pn] = WithPast(part, left);
    const double g = Gain(pb, pn);
    if (g > best_part) {
      best_part = g;
      part_bad = pb;
      part_n = pn;
    }
  }
  const double loss = bad / n;
  if (Concentrated(part_bad, part_n, loss, parts_[c].size())) return false;
  if (n - part_n <= 0) return true;
  const double rest_bad = bad - part_bad, rest_n = n - part_n;
  // The part at its rate with the rest at the background explains the counts
  // better than the switch at one rate, by more than chance. A part on half
  // the switch's paths (a link of a spine of four: every path crosses two)
  // loses at most twice the switch's rate, so only the silence of the rest
  // shows it alone; and tested at half the switch's rate (below), that
  // silence never looked long enough: a 1% link under a spine of four kept
  // that spine named for as long as it lasted.
  const double chance = kConcentrated / static_cast<double>(parts_[c].size());
  if (ConcentratedLikelihood(part_bad, part_n, rest_bad, rest_n, p0_) > std::log(1.0 / chance)) {
    return false;
  }
  // And the rest loses less than half the switch's rate, by more than chance.
  if (rest_bad / rest_n >= 0.5 * loss) return true;
  return 1.0 - PoissonTail(std::floor(rest_bad) + 1, 0.5 * loss * rest_n) >= chance;
}

// A held switch explains after its held parts that still have failures to
// explain: they were named on their own, and only what they leave says
// whether the switch loses beyond them. Taking them whole first, a switch
// named on a window where its uplink's failures did not yet look
// concentrated kept them every window after.
bool SequentialPass::HeldPartWaiting(std::uint32_t c) const {
  if (c >= parts_.size()) return false;
  for (const std::uint32_t part : parts_[c]) {
    if (blamed_[part] || Counts(part).first <= 0) continue;
    const auto* e = book_.Find(keys_[part]);
    if (e != nullptr && e->culprit && !e->untraced) return true;
  }
  return false;
}

// Whether a candidate with `bad` of `n` unexplained qualifies: conclusive over
// the windows (its CUSUM with this window reaches h) or in this window alone.
bool SequentialPass::Eligible(const EvidenceBook::Entry* e, double bad, double n) const {
  const double s_new =
      std::clamp((e ? e->s : 0.0) + LogLikelihoodRatio(bad, n, q0_, H1(e, bad, n)), 0.0, cap_);
  if (s_new >= h_) return true;
  return bad >= params_.min_failures && bad / n >= p0_ + params_.min_loss &&
         PoissonTail(bad, n * p0_) < window_alpha_;
}

// The strongest candidate not blamed yet, into best_ (best_strength_ stays
// below 0 when there is none). Strength is evidence in nats; culprits of
// earlier windows that still qualify go first, among themselves by strength.
// Evidence that rests on untraced probes (an RNIC with few traced ones) is
// the weakest kind: its failures may cross a fabric fault not chosen yet,
// which would make its ECMP groups ambiguous. Such a candidate is eligible
// on all its probes but ranked by its traced ones alone (unless `full`): an
// RNIC that fails everything it sends is still chosen first, one whose few
// failures are all untraced only after the fabric's candidates (and, when no
// failure is traced at all, by all its probes).
void SequentialPass::Pick(bool full) {
  best_strength_ = -1;
  best_held_ = false;
  for (std::uint32_t c = 0; c < n_comp_; ++c) {
    if (blamed_[c]) continue;
    const auto [bad, n] = Counts(c);
    if (n <= 0 || bad <= 0) continue;
    const auto* e = book_.Find(keys_[c]);
    // Ranked (below) by this window's log-likelihood ratio at its own loss
    // plus the CUSUM it brings in, not by its new CUSUM: that saturates at
    // the cap, where a switch and its links would tie.
    if (!Eligible(e, bad, n)) continue;
    // Candidates that explain the same failures tie on this window's
    // evidence (a 1% link's failures that all fell on the flows it shares
    // with a neighbour): the evidence of the windows before decides, which
    // the true fault has more of, since the neighbour's share of its
    // failures is all the neighbour has.
    const double strength =
        left_.OnUntraced(c) && !full
            ? Gain(left_.traced(c), left_.traced(c) + static_cast<double>(p_.good[c]))
            : Gain(bad, n) + (e ? e->s : 0.0);
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
    const bool held = e != nullptr && e->culprit && !e->untraced;
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
    // Only RNICs with no traced failure are eligible (nothing traced yet):
    // the one whose probes fail most explains the others' failures to it.
    if (best_strength_ == 0) Pick(true);
    if (best_strength_ < 0) break;
    const auto [bad, n] = Counts(best_);
    chosen_.push_back({best_, bad, n, left_.OnUntraced(best_) && left_.traced(best_) <= 0});
    blamed_[best_] = 1;
    left_.Explain(best_);
  }
}

// A part chosen before its switch in the same window (its failures a little
// more concentrated by chance) goes back into the switch when the two
// together are not concentrated on it: the switch explains both.
void SequentialPass::MergePartsIntoWholes() {
  for (Chosen& whole : chosen_) {
    if (!HasParts(whole.c)) continue;
    const auto& of = parts_[whole.c];
    for (Chosen& part : chosen_) {
      if (&part == &whole || part.n <= 0 || whole.n < 0 ||
          std::find(of.begin(), of.end(), part.c) == of.end()) {
        continue;
      }
      const double bad = whole.bad + part.bad, n = whole.n + part.bad;
      if (Concentrated(part.bad, part.n, bad / n, of.size())) continue;
      whole.bad = bad;
      whole.n = n;
      blamed_[part.c] = 0;
      part.n = -1;  // merged
    }
  }
  std::erase_if(chosen_, [](const Chosen& ch) { return ch.n < 0; });
}

// Parts named one by one can be their switch all along: held culprits explain
// first (Pick), so a lossy spine whose first window looked concentrated on one
// link kept being named link by link, each held link taking its share before
// the spine was weighed. When two or more of a switch's parts are chosen and,
// with the other culprits explaining first, the switch alone qualifies and
// its loss is spread over its parts (the test Pick puts a switch to) with no
// part clean, the switch replaces them: one fault, not several. Switches with the most chosen
// parts are weighed first; each is weighed once.
void SequentialPass::PreferWholes() {
  if (chosen_.size() < 2) return;
  std::vector<std::pair<std::size_t, std::uint32_t>> wholes;  // chosen units, whole
  for (std::uint32_t w = 0; w < parts_.size() && w < n_comp_; ++w) {
    if (parts_[w].empty() || blamed_[w]) continue;
    const std::size_t named = ChosenUnits(w);
    if (named >= 2) wholes.emplace_back(named, w);
  }
  std::sort(wholes.begin(), wholes.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  for (const auto& [named, w] : wholes) TryWhole(w);
}

std::size_t SequentialPass::ChosenUnits(std::uint32_t whole) const {
  std::vector<std::uint32_t> units;
  for (const std::uint32_t part : parts_[whole]) {
    if (blamed_[part]) units.push_back(UnitOf(part));
  }
  std::sort(units.begin(), units.end());
  return static_cast<std::size_t>(std::unique(units.begin(), units.end()) - units.begin());
}

bool SequentialPass::UnitChosen(std::uint32_t whole, std::uint32_t part) const {
  const std::uint32_t unit = UnitOf(part);
  for (const std::uint32_t other : parts_[whole]) {
    if (blamed_[other] && UnitOf(other) == unit) return true;
  }
  return false;
}

// Whether a part of `whole` not chosen loses far less than the chosen ones:
// more rarely than chance allows (kConcentrated). A lossy switch loses at its
// rate on every part; a faulty link under it makes its siblings lose only on
// the paths they share with it. On a switch of few links the spread test
// cannot tell the two apart (a spine of four: one link's fault is on half its
// paths, so the link loses twice the switch's rate), this test can.
bool SequentialPass::SomePartClean(std::uint32_t whole, const Unexplained& left) const {
  // Each unit judged by the component standing for it (a link both ways).
  double named_bad = 0, named_n = 0;
  for (const std::uint32_t part : parts_[whole]) {
    if (UnitOf(part) != part || !UnitChosen(whole, part)) continue;
    const auto [pb, pn] = WithPast(part, left);
    named_bad += pb;
    named_n += pn;
  }
  if (named_n <= 0) return false;
  const double loss = named_bad / named_n;
  for (const std::uint32_t part : parts_[whole]) {
    if (UnitOf(part) != part || UnitChosen(whole, part)) continue;
    const auto [pb, pn] = WithPast(part, left);
    if (pn <= 0) continue;
    // P(X <= pb) at the chosen units' rate.
    if (1.0 - PoissonTail(std::floor(pb) + 1, loss * pn) < kConcentrated) return true;
  }
  return false;
}

bool SequentialPass::TryWhole(std::uint32_t whole) {
  const auto& of = parts_[whole];
  const auto is_part = [&](std::uint32_t c) {
    return std::find(of.begin(), of.end(), c) != of.end();
  };
  if (ChosenUnits(whole) < 2) return false;  // an earlier switch took them
  Unexplained without(p_, params_.min_traced);
  for (const Chosen& ch : chosen_) {
    if (!is_part(ch.c)) without.Explain(ch.c);
  }
  without.Recount();
  const auto [bad, n] = without.Counts(whole);
  if (n <= 0 || bad <= 0 || !Eligible(book_.Find(keys_[whole]), bad, n)) return false;
  if (!Spread(whole, without) || SomePartClean(whole, without)) return false;
  for (Chosen& ch : chosen_) {
    if (!is_part(ch.c)) continue;
    blamed_[ch.c] = 0;
    ch.n = -1;
  }
  std::erase_if(chosen_, [](const Chosen& ch) { return ch.n < 0; });
  chosen_.push_back({whole, bad, n, false});
  blamed_[whole] = 1;
  // Every path through a part crosses its switch: the switch explains them all.
  left_.Explain(whole);
  left_.Recount();
  return true;
}

void SequentialPass::Report(std::uint32_t c, double bad, double n, const EvidenceBook::Entry& e) {
  Culprit cul;
  cul.component = c;
  cul.explained = static_cast<std::uint64_t>(std::llround(bad));
  cul.failures = out().failures[c];
  cul.good = static_cast<std::uint64_t>(std::llround(std::max(0.0, n - bad)));
  cul.loss = e.est;
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
    const double loss = ch.n > 0 ? ch.bad / ch.n : 0;
    e.s = std::clamp(e.s + LogLikelihoodRatio(ch.bad, ch.n, q0_, H1(&e, ch.bad, ch.n)), 0.0, cap_);
    e.est = fresh ? loss : 0.5 * e.est + 0.5 * loss;
    e.PoolHeld(ch.bad, ch.n, fresh ? 0.0 : params_.held_rate_decay);
    e.failing =
        std::min(1.0, PoissonLowerBound(e.held_bad, 1 - params_.held_rate_confidence) / e.held_n);
    e.s = std::max(e.s, h_);
    e.r = 0;
    e.culprit = true;
    e.untraced = ch.untraced;
    e.windows = fresh ? 1 : e.windows + 1;
    e.unobserved = 0;
    Report(ch.c, ch.bad, ch.n, e);
    result_.fresh.push_back(fresh);
  }
}

// Every other component's evidence, with what is left for it.
void SequentialPass::UpdateTheRest() {
  for (std::uint32_t c = 0; c < n_comp_; ++c) {
    if (blamed_[c]) continue;
    const auto [bad, n] = Counts(c);
    const auto* known = book_.Find(keys_[c]);
    if (known == nullptr && (n <= 0 || bad <= 0)) continue;  // nothing to remember
    EvidenceBook::Entry& e = book_.At(keys_[c]);
    if (n <= 0) {
      // Not observed: a culprit nobody's probes cross any more is held for a
      // while (its incident stays open), then let go.
      if (e.culprit && ++e.unobserved >= params_.max_unobserved_windows) e.culprit = false;
      if (e.culprit) Report(c, 0, 0, e);
      continue;
    }
    e.unobserved = 0;
    if (e.culprit && bad <= 0 && surely_[c] > 0) {
      // Superseded: failures surely crossed it, and components chosen in this
      // window explained every one (a link named before the lossy spine it is
      // part of was conclusive). A wrong early pick is let go at once, with
      // its evidence, rather than held while its CUSUM drains. Failures it
      // was only a candidate for (a cut-short trace) say nothing of that: a
      // lossier candidate explains them first, and the window counts for it
      // as one without failures, against its hysteresis and recovery test.
      e.culprit = false;
      e.s = 0;
      continue;
    }
    e.s = std::clamp(e.s + LogLikelihoodRatio(bad, n, q0_, H1(&e, bad, n)), 0.0, cap_);
    if (!e.culprit) continue;
    // Held while the evidence holds (hysteresis), with what is left for it,
    // until its windows say it is back at p0.
    e.r = std::max(
        0.0, e.r - LogLikelihoodRatio(bad, n, p0_, std::max(p0_ + params_.min_loss, e.failing)));
    e.culprit = e.s >= h_ * params_.off_fraction && e.r < release_;
    if (!e.culprit) {
      e.s = std::min(e.s, h_ * params_.off_fraction);
      e.r = 0;
      continue;
    }
    e.est = 0.5 * e.est + 0.5 * (bad / n);
    // Pooled, but `failing` is refreshed only when it is chosen again: its
    // quiet windows lower the rate it is tested at from then on, not the
    // recovery they are evidence of.
    e.PoolHeld(bad, n, params_.held_rate_decay);
    ++e.windows;
    Report(c, bad, n, e);
    result_.fresh.push_back(false);
  }
}

// The spread test's memory: what each component has left unexplained by the
// culprits that are no switch (a link or RNIC named on its own took its
// failures; a switch named for a link's failures must not hide them).
void SequentialPass::RememberForSpread() {
  Unexplained beside_switches(p_, params_.min_traced);
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
    if (!p_.ambient[c] || blamed_[c]) continue;
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

}  // namespace

SequentialResult InferSequential(InferenceProblem& p, std::span<const std::uint64_t> keys,
                                 std::span<const std::vector<std::uint32_t>> parts,
                                 const SequentialParams& params, EvidenceBook& book,
                                 std::span<const std::uint32_t> units) {
  return SequentialPass(p, keys, parts, params, book, units).Run();
}

}  // namespace hostmesh::analysis
