#include <algorithm>
#include <cmath>

#include "analyzer/analysis/sequential_pass.h"

// A switch against its parts (its links and RNICs): whether its loss is
// spread over them, and when parts named one by one are the switch.
namespace hostmesh::analysis::sequential_internal {

namespace {
// How unlikely, at its switch's loss rate, a part's failures must be (over
// all the switch's parts) for the loss to count as concentrated on it.
constexpr double kConcentrated = 1e-3;

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

// As WithPast, but a culprit's past is its rate since it was named: the
// spread memory's past has its own failures explained away (it explained
// them), and a held link and RNIC under one rail switch looked no lossier
// than their clean siblings, so the switch took their place.
std::pair<double, double> SequentialPass::OwnWithPast(std::uint32_t c,
                                                      const Unexplained& left) const {
  const auto* e = book_.Find(keys_[c]);
  if (e == nullptr || !e->culprit) return WithPast(c, left);
  auto [bad, n] = left.Counts(c);
  return {bad + e->held_bad, n + e->held_n};
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
  if (n - part_n <= 0) return !EndpointsExplain(c, left);
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
  if (rest_bad / rest_n < 0.5 * loss &&
      1.0 - PoissonTail(std::floor(rest_bad) + 1, 0.5 * loss * rest_n) < chance) {
    return false;
  }
  return !EndpointsExplain(c, left);
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

// A part chosen before its switch in the same window (its failures a little
// more concentrated by chance) goes back into the switch when the two
// together are not concentrated on it: the switch explains both.
void SequentialPass::MergePartsIntoWholes() {
  for (Chosen& whole : chosen_) {
    if (!HasParts(whole.c)) continue;
    const std::size_t parts = parts_[whole.c].size();
    for (Chosen& part : chosen_) {
      if (&part == &whole || part.n <= 0 || whole.n < 0 || !IsPartOf(whole.c, part.c)) continue;
      const double bad = whole.bad + part.bad, n = whole.n + part.bad;
      if (Concentrated(part.bad, part.n, bad / n, parts)) continue;
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
    const auto [pb, pn] = OwnWithPast(part, left);
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
  if (ChosenUnits(whole) < 2) return false;  // an earlier switch took them
  Unexplained without(p_, LeftOptions());
  for (const Chosen& ch : chosen_) {
    if (!IsPartOf(whole, ch.c)) without.Explain(ch.c);
  }
  without.Recount();
  const auto [bad, n] = without.Counts(whole);
  if (n <= 0 || bad <= 0 || !Eligible(book_.Find(keys_[whole]), bad, n)) return false;
  if (!Spread(whole, without) || SomePartClean(whole, without)) return false;
  for (Chosen& ch : chosen_) {
    if (!IsPartOf(whole, ch.c)) continue;
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

}  // namespace hostmesh::analysis::sequential_internal
