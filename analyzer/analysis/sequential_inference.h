#pragma once

// Loss localization with evidence that accumulates across windows.
//
// One window rarely holds enough evidence for a small fault: a link losing
// 0.5% of the 400 probes that cross it in a window loses two, which background
// loss also explains. So every component (directed fabric link, switch, RNIC)
// keeps a CUSUM of the log-likelihood ratio of its windows' evidence:
//   H1: its probes fail at p1 = p0 + delta     H0: they fail at q0 (background)
//   LLR(bad, n) = bad ln(p1/q0) + (n - bad) ln((1 - p1)/(1 - q0))
//   S <- clamp(S + LLR, 0, cap)
// q0 lies a little above the ambient rate p0: it is chosen so that the LLR's
// drift is zero at p0 + delta/2 (the classical CUSUM reference value, half
// the shift to detect). With q0 = p0 the drift would turn positive at the
// logarithmic mean of p0 and p1, about p0 + delta/3 at p0 = 0.1%: a link
// whose own background is three times the fleet's would be named within
// minutes. Now an excess below delta/2 drains the sum (named only at the
// false-alarm rate), one above it accumulates, and delta itself is named at
// about half the speed the plain test would give it. A window that surely
// shows more (its rate's lower bound, held_rate_confidence, well above p0 +
// delta) is weighed against the q0 the same rule gives for the H1 it surely
// shows, nearer p0 (SequentialPass::CusumStep).
// A component becomes a culprit when S reaches h, or at once when one
// window alone is conclusive (Poisson tail P(X >= bad | n p0) below
// window_alpha / components, and at least min_failures failures, and loss
// above p0 + delta). It stays one while S stays above off_fraction x h, and
// until the windows since it last failed beyond chance at p0 (a window's
// Poisson tail below window_alpha) show it back at p0: a second CUSUM of the
// opposite ratio,
//   R <- max(0, R - LLR(bad, n, p0, est))
// with est its loss rate when it was last chosen (kept for this test, not
// averaged with its clean windows as the reported estimate is, which would
// let the fault's own rate fade out of the test), lets it go when R reaches
// ln(culprits held) + ln(1 / false_alarms_per_window): a fault that still
// loses at its rate is let go by chance (its incident split) about as often
// fleet-wide as a healthy component is named. That holds only if est is not
// above its true rate (against a rate twice too high, quiet windows look
// twice as conclusive), so est is a rate it surely loses at: the one-sided
// 95% lower confidence bound of its pooled rate over the windows since it
// was named, the older ones decayed (held_rate_decay) so that a fault that
// eases is tested at its new rate. Neither the window that named it (picked
// for its burst) nor a later burst sets it: a 1% link over 380 probes a
// window, tested against the 2.5% it was named at, was let go after two
// quiet windows, or after one with a single failure. The same rate is a held
// culprit's H1 in S, whose hysteresis those quiet windows drained too. A
// gray link that comes back is let go after one clean window; a 1% loss
// over 400 probes a window, held a few minutes, after about four; a 1% fault
// that happens to show no failure in two windows in a row (e^-8) is not.
//
// Per window, greedily (as the window inference, loss_inference.h), the
// strongest candidate explains every failure through it before the next is
// chosen, so a link fault does not also indict the RNICs and switches on its
// paths, and a switch whose links all fail explains them better than any one
// link (its loss is spread over more probes, but its evidence is larger).
// Components already culprits (and still eligible) explain first, so one
// window's chance shape does not hand a held fault's failures to its switch.
// Among the rest, strength is the window's evidence plus the CUSUM the
// component brings into it: a neighbour sharing a third of a fault's flows
// can draw all of one window's failures (three of three, about one window in
// thirty at 1% over 450 probes) and tie with the fault on that window, but
// not on the windows before, whose failures it had only a third of. A fresh
// pick whose failures a rival explains as well, with no evidence of past
// windows to tell them apart (less than 19 to 1), is named in neither's
// place for one window (sequential_ties.cc).
// Evidence of a component is what
// remains unexplained when it is judged; untraced probes count as in
// loss_inference.h (Unexplained, corroborated), and an RNIC whose traced
// probes alone do not qualify it is weighed only once no other candidate is
// left (SequentialPass::Pick).
//
// p0, the ambient path loss, is estimated from the data: the pooled loss rate
// that culprits leave unexplained on the directed fabric links, without
// links gathering evidence, decayed over windows (per fleet; every probe of a
// same-host path crosses the same tiers, so one rate serves every component).
//
// False alarms: h = ln(components) + ln(1 / false_alarms_per_window), so the
// fleet-wide rate of false culprits stays near false_alarms_per_window (a
// CUSUM's run length to a false alarm is about e^h windows per component).

#include <cstdint>
#include <span>
#include <vector>

#include "analyzer/analysis/flat_map.h"
#include "analyzer/analysis/loss_inference.h"

namespace hostmesh::analysis {

struct SequentialParams {
  double min_loss = 0.003;  // delta: the smallest excess loss worth an incident
  // The excess, as a fraction of delta, at which the CUSUM's drift is zero.
  double indifference = 0.5;
  double prior_background = 1e-3;
  double background_floor = 1e-6;
  double background_decay = 0.9;  // per window
  double false_alarms_per_window = 1e-4;
  double window_alpha = 1e-4;
  double off_fraction = 0.5;
  // A held culprit's rate (the recovery test's H1, above): pooled over its
  // windows, each window keeping this much of the past (0.9 weighs about the
  // last ten), and taken at its one-sided lower confidence bound.
  double held_rate_decay = 0.9;
  double held_rate_confidence = 0.95;
  // A candidate is named over a rival that explains the same failures (each
  // takes the other's case away) only when its evidence makes it this likely
  // against that rival (0.95: 19 to 1); otherwise neither is named in that
  // window, once (SequentialPass::DeferTie).
  double rival_confidence = 0.95;
  double cap_factor = 1.5;
  // The spread test's memory (a switch against its parts, below): each
  // window keeps this much of the past, about the last ten windows, which
  // covers the windows the CUSUM takes to name a fault near min_loss (a 1%
  // link crossed by 450 probes a window needs about seven). One window alone
  // has too few failures to show a small fault concentrated on one link, so
  // a rail switch took the failures of its uplink losing 1% both ways.
  double spread_decay = 0.9;
  std::uint32_t max_unobserved_windows = 15;
  std::uint32_t min_failures = 3;
  // An RNIC with fewer traced probes is ranked as one judged on untraced
  // failures (no tie deferral; not held first when named on them alone).
  std::uint32_t min_traced = 50;
  std::uint32_t max_culprits = 64;
};

// What persists between windows: per component key (the caller's stable id),
// its CUSUM and loss estimate; and the background.
class EvidenceBook {
 public:
  struct Entry {
    double s = 0;         // CUSUM, nats
    double r = 0;         // recovery CUSUM while held, nats
    double failing = 0;   // its loss rate when last chosen (the recovery test's H1)
    double held_bad = 0;  // failures and probes since it was named (its pooled rate)
    double held_n = 0;
    // The loss it is reported at: pooled as held_* are, but started anew in
    // a window whose failures that rate makes unlikely, either way (below
    // window_alpha): a lossy NIC that dies is reported dead in that window,
    // while a 1% fault's windows (0 to 9 failures of 400) do not swing it.
    double rate_bad = 0;
    double rate_n = 0;
    // Failures and probes of past windows that no culprit but a switch
    // explained, decayed by spread_decay: what the spread test judges a
    // switch and its parts on, beside the window's own.
    double past_bad = 0;
    double past_n = 0;
    // An RNIC's traced failures and probes over its CUSUM's current run (the
    // windows since the sum last stood at 0): what corroborates its
    // untraced failures (loss_inference.h: Unexplained), as the sum itself
    // pools evidence over the run.
    double run_bad = 0;
    double run_n = 0;
    bool culprit = false;
    bool untraced = false;         // last chosen on untraced failures alone
    bool deferred = false;         // tied with a rival in the last window, named by neither
    std::uint32_t windows = 0;     // windows as a culprit, in a row
    std::uint32_t unobserved = 0;  // windows in a row no probe crossed it

    // Adds a window to the pooled rate, the past weighed by `keep` (0 starts anew).
    void PoolHeld(double bad, double n, double keep) {
      held_bad = held_bad * keep + bad;
      held_n = held_n * keep + n;
    }
    // Adds a window to the reported rate (above); `alpha` 0 starts anew.
    void PoolRate(double bad, double n, double keep, double alpha);
    // Adds a window's traced counts to the run, or ends it (the sum at 0).
    void PoolRun(double bad, double n) {
      run_bad = s > 0 ? run_bad + bad : 0;
      run_n = s > 0 ? run_n + n : 0;
    }
  };

  explicit EvidenceBook(double prior_background = 1e-4);
  Entry& At(std::uint64_t key);
  const Entry* Find(std::uint64_t key) const;
  Entry* FindMutable(std::uint64_t key) {
    return const_cast<Entry*>(static_cast<const EvidenceBook*>(this)->Find(key));
  }
  // The ambient path loss: decayed failures over decayed probes.
  double background(double floor) const;
  void AddBackground(double failures, double probes, double decay);
  std::size_t size() const { return entries_.size(); }
  std::size_t memory_bytes() const {
    return index_.memory_bytes() + entries_.capacity() * sizeof(Entry);
  }
  template <typename F>
  void ForEach(F&& f) {
    index_.ForEach([&](std::uint64_t key, std::uint32_t slot) { f(key, entries_[slot]); });
  }

 private:
  FlatMap index_;
  std::vector<Entry> entries_;
  double fail_ = 0;
  double probes_ = 0;
};

struct SequentialResult {
  InferenceResult inference;  // culprits in the order chosen; z = evidence S (nats)
  std::vector<bool> fresh;    // per culprit: became one in this window
  double background = 0;      // p0 used
  double threshold = 0;       // h
};

// keys[c] is the stable id of component c of `problem`. parts[c], for a
// component made of others (a switch: its links and RNICs), lists them: it is
// blamed only when its loss is spread over them (its strongest part loses at
// most 2.5 times its rate, the rest at least half of it, and the part alone
// is not the likelier explanation of the counts), so a link fault,
// or a link and an RNIC fault under one switch, are not the switch. That test
// counts, beside this window's, what the switch and its parts had left in
// past windows (spread_decay) once the culprits that are no switch explained
// theirs: one window of a link losing 1% both ways holds about nine failures,
// too few to tell that they all crossed it, and a switch named on them in
// that window must not hide them from the windows after.
//
// Every component observed gets an entry in `book` (its past counts), not
// only those that failed: about 100 bytes each, a few tens of MB at 10,000
// hosts.
//
// Held culprits explain first, so parts of a switch named one by one would
// keep the switch from ever being weighed: when two or more of its units are
// chosen (units[c]: the component that stands for the thing c is part of, a
// link's direction -> the link both ways; empty: each component its own),
// the switch replaces them if it alone qualifies once the other culprits
// explained theirs, its loss is spread, and no unit not chosen loses far less
// than the chosen ones (a lossy switch loses on every part).
SequentialResult InferSequential(InferenceProblem& problem, std::span<const std::uint64_t> keys,
                                 std::span<const std::vector<std::uint32_t>> parts,
                                 const SequentialParams& params, EvidenceBook& book,
                                 std::span<const std::uint32_t> units = {});

double LogLikelihoodRatio(double bad, double n, double p0, double p1);
// The H0 rate q0 in [p0, mid) at which the log-likelihood ratio of q0 against
// p1 has zero drift for probes failing at `mid` (p0 when that drift is already
// zero or negative at q0 = p0).
double IndifferentBackground(double p0, double p1, double mid);
// The smallest Poisson mean under which k or more events have a chance of at
// least `chance` (0 for k <= 0): a lower confidence bound on the mean.
double PoissonLowerBound(double k, double chance);

}  // namespace hostmesh::analysis
