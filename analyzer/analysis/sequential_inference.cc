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
}  // namespace

SequentialResult InferSequential(InferenceProblem& p, std::span<const std::uint64_t> keys,
                                 std::span<const std::vector<std::uint32_t>> parts,
                                 const SequentialParams& params, EvidenceBook& book) {
  const std::size_t n_comp = p.components;
  SequentialResult result;
  InferenceResult& out = result.inference;
  const double p0 = book.background(params.background_floor);
  const double h = std::log(static_cast<double>(std::max<std::size_t>(n_comp, 1))) +
                   std::log(1.0 / params.false_alarms_per_window);
  const double cap = h * params.cap_factor;
  const double window_alpha =
      params.window_alpha / static_cast<double>(std::max<std::size_t>(n_comp, 1));
  // The CUSUM's H0 (header): zero drift at p0 + indifference x delta.
  const double q0 =
      IndifferentBackground(p0, p0 + params.min_loss, p0 + params.indifference * params.min_loss);
  result.background = p0;
  result.threshold = h;
  // The recovery test's bar (header): false releases as rare fleet-wide as
  // false alarms, over the culprits held coming into this window.
  std::size_t holding = 0;
  book.ForEach([&holding](std::uint64_t, const EvidenceBook::Entry& e) { holding += e.culprit; });
  const double release = std::log(static_cast<double>(std::max<std::size_t>(holding, 1))) +
                         std::log(1.0 / params.false_alarms_per_window);

  std::vector<char> blamed(n_comp, 0);
  Unexplained left(p, params.min_traced);
  const auto counts = [&left](std::uint32_t c) { return left.Counts(c); };
  FailuresThrough(p, out.failures);
  // Per component, the failures of paths that surely crossed it (not as one
  // of a cut-short trace's candidates): only these say, once others explain
  // them all, that it was a redundant pick (below, superseded).
  std::vector<double> surely(n_comp, 0);
  for (const auto& g : p.groups) {
    for (std::uint32_t i = 0; i < g.size; ++i) {
      if (p.weights[g.first + i] >= kSurely) surely[p.comps[g.first + i]] += g.bad;
    }
  }
  // H1: for a culprit, the rate it surely loses at (as in its recovery test:
  // against its latest estimate, inflated by the burst that named it, a quiet
  // window or two drained its hysteresis); for the rest, halfway from p0 to
  // this window's loss, and at least p0 + delta: a 3% fault gains evidence as
  // a fault of its size (a damped generalized likelihood ratio), while the
  // noise of a healthy component's windows rarely moves H1 off p0 + delta.
  auto h1_of = [&](const EvidenceBook::Entry* e, double bad, double n) {
    if (e != nullptr && e->culprit) return std::max(p0 + params.min_loss, e->failing);
    const double loss = n > 0 ? bad / n : 0.0;
    return p0 + std::max(params.min_loss, (loss - p0) / 2);
  };

  // Evidence in nats of `bad` failures in `n` probes, at their own loss rate.
  auto gain = [&](double bad, double n) {
    if (n <= 0 || bad <= 0) return 0.0;
    return std::max(0.0, LogLikelihoodRatio(bad, n, p0, bad / n));
  };
  // A component made of parts (a switch: its links and RNICs) is blamed only
  // when its loss is spread over them: its strongest part loses at most 2.5
  // times the switch's rate, and without that part the rest still loses at
  // least half of it, each up to chance (kConcentrated). A fault on one link or RNIC (or two) under
  // a switch concentrates its loss; a lossy switch loses evenly everywhere.
  // Judged on the window's counts with the past windows' (spread_decay): one
  // window of a 1% link rarely holds the failures to show them concentrated.
  auto with_past = [&](std::uint32_t c) {
    auto [bad, n] = counts(c);
    if (const auto* e = book.Find(keys[c])) {
      bad += e->past_bad;
      n += e->past_n;
    }
    return std::pair{bad, n};
  };
  auto spread = [&](std::uint32_t c) {
    if (c >= parts.size() || parts[c].empty()) return true;
    if (counts(c).first <= 0) return false;
    const auto [bad, n] = with_past(c);
    if (n <= 0 || bad <= 0) return false;
    double best_part = -1, part_bad = 0, part_n = 0;
    for (const std::uint32_t part : parts[c]) {
      const auto [pb, pn] = with_past(part);
      const double g = gain(pb, pn);
      if (g > best_part) {
        best_part = g;
        part_bad = pb;
        part_n = pn;
      }
    }
    const double loss = bad / n;
    if (Concentrated(part_bad, part_n, loss, parts[c].size())) return false;
    if (n - part_n <= 0) return true;
    // And the rest loses less than half the switch's rate, by more than chance.
    const double rest_bad = bad - part_bad, rest_n = n - part_n;
    if (rest_bad / rest_n >= 0.5 * loss) return true;
    const double chance = kConcentrated / static_cast<double>(parts[c].size());
    return 1.0 - PoissonTail(std::floor(rest_bad) + 1, 0.5 * loss * rest_n) >= chance;
  };

  // A held switch explains after its held parts that still have failures to
  // explain: they were named on their own, and only what they leave says
  // whether the switch loses beyond them. Taking them whole first, a switch
  // named on a window where its uplink's failures did not yet look
  // concentrated kept them every window after.
  auto held_part_waiting = [&](std::uint32_t c) {
    if (c >= parts.size()) return false;
    for (const std::uint32_t part : parts[c]) {
      if (blamed[part] || counts(part).first <= 0) continue;
      const auto* e = book.Find(keys[part]);
      if (e != nullptr && e->culprit && !e->untraced) return true;
    }
    return false;
  };

  // Greedy: the strongest candidate explains its failures, then the next.
  // Strength is evidence in nats: the CUSUM once it reaches h, or this
  // window's own log-likelihood ratio at the component's loss when the window
  // alone is conclusive. Culprits of earlier windows that still qualify go
  // first, among themselves by strength (below, in pick).
  struct Chosen {
    std::uint32_t c;
    double bad, n;
    bool untraced = false;  // on untraced failures alone
  };
  std::vector<Chosen> chosen;
  // Evidence that rests on untraced probes (an RNIC with few traced ones) is
  // the weakest kind: its failures may cross a fabric fault not chosen yet,
  // which would make its ECMP groups ambiguous. Such a candidate is eligible
  // on all its probes but ranked by its traced ones alone: an RNIC that fails
  // everything it sends is still chosen first, one whose few failures are
  // all untraced only after the fabric's candidates (and, when no failure is
  // traced at all, by all its probes).
  std::uint32_t best = 0;
  double best_strength = -1;
  bool best_held = false;
  const auto pick = [&](bool full) {
    for (std::uint32_t c = 0; c < n_comp; ++c) {
      if (blamed[c]) continue;
      const auto [bad, n] = counts(c);
      if (n <= 0 || bad <= 0) continue;
      const auto* e = book.Find(keys[c]);
      const double s_new =
          std::clamp((e ? e->s : 0.0) + LogLikelihoodRatio(bad, n, q0, h1_of(e, bad, n)), 0.0, cap);
      // Eligible: conclusive over the windows (S reaches h) or in this window
      // alone. Ranked by what it explains of this window (the log-likelihood
      // ratio at its own loss): accumulated evidence saturates at the cap, so a
      // switch and its links would otherwise tie.
      const double loss = bad / n;
      bool eligible = s_new >= h;
      if (!eligible && bad >= params.min_failures && loss >= p0 + params.min_loss) {
        eligible = PoissonTail(bad, n * p0) < window_alpha;
      }
      if (!eligible) continue;
      // Candidates that explain the same failures tie on this window's
      // evidence (a 1% link's failures that all fell on the flows it shares
      // with a neighbour): the evidence of the windows before decides, which
      // the true fault has more of, since the neighbour's share of its
      // failures is all the neighbour has.
      const double strength =
          left.OnUntraced(c) && !full
              ? gain(left.traced(c), left.traced(c) + static_cast<double>(p.good[c]))
              : gain(bad, n) + (e ? e->s : 0.0);
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
      if (held < best_held || (held == best_held && strength <= best_strength)) continue;
      if (held && held_part_waiting(c)) continue;
      if (spread(c)) {
        best = c;
        best_strength = strength;
        best_held = held;
      }
    }
  };
  for (;;) {
    left.Recount();
    if (chosen.size() >= params.max_culprits) break;
    best_strength = -1;
    best_held = false;
    pick(false);
    // Only RNICs with no traced failure are eligible (nothing traced yet):
    // the one whose probes fail most explains the others' failures to it.
    if (best_strength == 0) {
      best_strength = -1;
      best_held = false;
      pick(true);
    }
    if (best_strength < 0) break;
    const auto [bad, n] = counts(best);
    chosen.push_back({best, bad, n, left.OnUntraced(best) && left.traced(best) <= 0});
    blamed[best] = 1;
    left.Explain(best);
  }

  // A part chosen before its switch in the same window (its failures a
  // little more concentrated by chance) goes back into the switch when the
  // two together are not concentrated on it: the switch explains both.
  for (Chosen& whole : chosen) {
    if (whole.c >= parts.size() || parts[whole.c].empty()) continue;
    for (Chosen& part : chosen) {
      if (&part == &whole || part.n <= 0 || whole.n < 0 ||
          std::find(parts[whole.c].begin(), parts[whole.c].end(), part.c) == parts[whole.c].end()) {
        continue;
      }
      const double bad = whole.bad + part.bad, n = whole.n + part.bad;
      if (Concentrated(part.bad, part.n, bad / n, parts[whole.c].size())) continue;
      whole.bad = bad;
      whole.n = n;
      blamed[part.c] = 0;
      part.n = -1;  // merged
    }
  }
  std::erase_if(chosen, [](const Chosen& ch) { return ch.n < 0; });

  // Update every component's evidence with what this window says of it:
  // a chosen one with the failures it explained, the rest with what is left.
  double explained_failures = 0;
  auto report = [&](std::uint32_t c, double bad, double n, const EvidenceBook::Entry& e) {
    explained_failures += bad;
    Culprit cul;
    cul.component = c;
    cul.explained = static_cast<std::uint64_t>(std::llround(bad));
    cul.failures = out.failures[c];
    cul.good = static_cast<std::uint64_t>(std::llround(std::max(0.0, n - bad)));
    cul.loss = e.est;
    cul.z = e.s;
    const double share = cul.failures ? bad / static_cast<double>(cul.failures) : 1.0;
    cul.confidence = std::clamp(share, 0.0, 1.0) * std::min(1.0, e.s / h);
    out.culprits.push_back(cul);
  };
  for (const Chosen& ch : chosen) {
    EvidenceBook::Entry& e = book.At(keys[ch.c]);
    const bool fresh = !e.culprit;
    const double loss = ch.n > 0 ? ch.bad / ch.n : 0;
    e.s = std::clamp(e.s + LogLikelihoodRatio(ch.bad, ch.n, q0, h1_of(&e, ch.bad, ch.n)), 0.0, cap);
    e.est = fresh ? loss : 0.5 * e.est + 0.5 * loss;
    e.PoolHeld(ch.bad, ch.n, fresh ? 0.0 : params.held_rate_decay);
    e.failing =
        std::min(1.0, PoissonLowerBound(e.held_bad, 1 - params.held_rate_confidence) / e.held_n);
    e.s = std::max(e.s, h);
    e.r = 0;
    e.culprit = true;
    e.untraced = ch.untraced;
    e.windows = fresh ? 1 : e.windows + 1;
    e.unobserved = 0;
    report(ch.c, ch.bad, ch.n, e);
    result.fresh.push_back(fresh);
  }
  for (std::uint32_t c = 0; c < n_comp; ++c) {
    if (blamed[c]) continue;
    const auto [bad, n] = counts(c);
    const auto* known = book.Find(keys[c]);
    if (known == nullptr && (n <= 0 || bad <= 0)) continue;  // nothing to remember
    EvidenceBook::Entry& e = book.At(keys[c]);
    if (n <= 0) {
      // Not observed: a culprit nobody's probes cross any more is held for a
      // while (its incident stays open), then let go.
      if (e.culprit && ++e.unobserved >= params.max_unobserved_windows) e.culprit = false;
      if (e.culprit) report(c, 0, 0, e);
      continue;
    }
    e.unobserved = 0;
    if (e.culprit && bad <= 0 && surely[c] > 0) {
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
    const double llr = LogLikelihoodRatio(bad, n, q0, h1_of(&e, bad, n));
    e.s = std::clamp(e.s + llr, 0.0, cap);
    if (e.culprit) {
      // Held while the evidence holds (hysteresis), with what is left for it,
      // until its windows say it is back at p0.
      e.r = std::max(
          0.0, e.r - LogLikelihoodRatio(bad, n, p0, std::max(p0 + params.min_loss, e.failing)));
      e.culprit = e.s >= h * params.off_fraction && e.r < release;
      if (!e.culprit) {
        e.s = std::min(e.s, h * params.off_fraction);
        e.r = 0;
        continue;
      }
      e.est = 0.5 * e.est + 0.5 * (bad / n);
      // Pooled, but `failing` is refreshed only when it is chosen again: its
      // quiet windows lower the rate it is tested at from then on, not the
      // recovery they are evidence of.
      e.PoolHeld(bad, n, params.held_rate_decay);
      ++e.windows;
      report(c, bad, n, e);
      result.fresh.push_back(false);
    }
  }

  // The spread test's memory: what each component has left unexplained by
  // the culprits that are no switch (a link or RNIC named on its own took its
  // failures; a switch named for a link's failures must not hide them).
  Unexplained beside_switches(p, params.min_traced);
  for (const Chosen& ch : chosen) {
    if (ch.c >= parts.size() || parts[ch.c].empty()) beside_switches.Explain(ch.c);
  }
  beside_switches.Recount();
  for (std::uint32_t c = 0; c < n_comp; ++c) {
    const auto [bad, n] = beside_switches.Counts(c);
    EvidenceBook::Entry* e = book.FindMutable(keys[c]);
    if (e == nullptr) {
      if (n <= 0) continue;
      e = &book.At(keys[c]);
    }
    e->past_bad = e->past_bad * params.spread_decay + bad;
    e->past_n = e->past_n * params.spread_decay + n;
  }

  // The ambient loss: the pooled unexplained loss rate of the directed fabric
  // links, leaving out culprits and links gathering evidence (S above h/2):
  // faults not yet conclusive must not raise the bar they are judged against.
  double ambient_bad = 0, ambient_n = 0;
  for (std::uint32_t c = 0; c < n_comp; ++c) {
    if (!p.ambient[c] || blamed[c]) continue;
    const auto* e = book.Find(keys[c]);
    if (e != nullptr && (e->culprit || e->s > h / 2)) continue;
    const auto [bad, n] = counts(c);
    ambient_bad += bad;
    ambient_n += n;
  }
  if (ambient_n > 0) book.AddBackground(ambient_bad, ambient_n, params.background_decay);
  (void)explained_failures;

  out.score.resize(n_comp);
  for (std::uint32_t c = 0; c < n_comp; ++c) {
    const auto [bad, n] = counts(c);
    out.score[c] = n > 0 ? bad * (bad / n) : 0.0;
  }
  out.residual = left.Residual();
  return result;
}

}  // namespace hostmesh::analysis
