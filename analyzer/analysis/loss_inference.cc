#include "analyzer/analysis/loss_inference.h"

#include <algorithm>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>

namespace hostmesh::analysis {
namespace {
// The one-sided confidence of the rate an RNIC's traced probes make
// plausible for its untraced ones (Unexplained::CountUntraced).
constexpr double kCorroboration = 0.95;
}  // namespace

void InferenceProblem::Reset(std::size_t component_count) {
  components = component_count;
  good.assign(component_count, 0);
  good_untraced.assign(component_count, 0);
  is_link.assign(component_count, false);
  ambient.assign(component_count, false);
  rail_pairs = 0;
  groups.clear();
  comps.clear();
  weights.clear();
  pairs.clear();
  routes.clear();
  route_comps.clear();
  route_weights.clear();
}

void InferenceProblem::AddRoute(std::uint32_t rail_pair, std::span<const std::uint32_t> rc,
                                std::span<const float> rw, double probes) {
  routes.push_back({rail_pair, static_cast<std::uint32_t>(route_comps.size()),
                    static_cast<std::uint32_t>(rc.size()), probes});
  route_comps.insert(route_comps.end(), rc.begin(), rc.end());
  if (rw.size() == rc.size()) {
    route_weights.insert(route_weights.end(), rw.begin(), rw.end());
  } else {
    route_weights.insert(route_weights.end(), rc.size(), 1.0f);
  }
}

void InferenceProblem::AddGroup(std::uint32_t pair, std::uint32_t bad, bool traced,
                                std::span<const std::uint32_t> group_comps,
                                std::span<const float> group_weights) {
  Group g;
  g.pair = pair;
  g.bad = bad;
  g.traced = traced;
  g.first = static_cast<std::uint32_t>(comps.size());
  g.size = static_cast<std::uint32_t>(group_comps.size());
  comps.insert(comps.end(), group_comps.begin(), group_comps.end());
  if (group_weights.size() == group_comps.size()) {
    weights.insert(weights.end(), group_weights.begin(), group_weights.end());
  } else {
    weights.insert(weights.end(), group_comps.size(), 1.0f);
  }
  groups.push_back(g);
}

std::vector<double> FailuresThrough(const InferenceProblem& p, std::vector<std::uint64_t>& out) {
  std::vector<double> failed(p.components, 0);
  for (const auto& g : p.groups) {
    for (std::uint32_t i = 0; i < g.size; ++i) {
      failed[p.comps[g.first + i]] += static_cast<double>(g.bad) * p.weights[g.first + i];
    }
  }
  out.resize(p.components);
  for (std::size_t c = 0; c < p.components; ++c) {
    out[c] = static_cast<std::uint64_t>(std::llround(failed[c]));
  }
  return failed;
}

UntracedExplainer::UntracedExplainer(const InferenceProblem& p, double ambiguous_above, bool peers)
    : ambiguous_above_(ambiguous_above),
      peers_(peers),
      added_(p.rail_pairs, 0),
      probes_(p.rail_pairs, 0),
      pair_failed_(p.pairs.size(), 0) {
  for (const auto& g : p.groups) {
    if (!g.traced && g.pair < pair_failed_.size()) pair_failed_[g.pair] += g.bad;
  }
  for (const auto& r : p.routes) {
    if (r.rail_pair < probes_.size()) probes_[r.rail_pair] += r.probes;
  }
  group_failed_.assign(p.rail_pairs, 0);
  group_probes_.assign(p.rail_pairs, 0);
  for (std::uint32_t i = 0; i < p.pairs.size(); ++i) {
    const auto g = p.pairs[i].rail_pair;
    if (g >= p.rail_pairs) continue;
    group_failed_[g] += static_cast<double>(pair_failed_[i]);
    group_probes_[g] += static_cast<double>(p.pairs[i].untraced);
  }
}

// A pair's untraced failures that its peers in the ECMP group (other hosts'
// pairs between the same two rail switches) make expected: their untraced
// loss rate times its untraced probes. A path fault fails every pair of the
// group alike, whether or not any trace saw it (a gray link eats the traces
// that would); an RNIC fault fails its own pairs, whose peers are clean.
double UntracedExplainer::PeerExpected(const InferenceProblem& p, std::uint32_t pair) const {
  const auto g = p.pairs[pair].rail_pair;
  if (g >= group_probes_.size()) return 0;
  const double own_n = static_cast<double>(p.pairs[pair].untraced);
  const double peers_n = group_probes_[g] - own_n;
  if (peers_n <= 0) return 0;
  return (group_failed_[g] - static_cast<double>(pair_failed_[pair])) / peers_n * own_n;
}

bool UntracedExplainer::Blamed(const InferenceProblem& p, std::uint32_t component, double loss) {
  bool changed = false;
  for (const auto& r : p.routes) {
    if (r.rail_pair >= added_.size() || probes_[r.rail_pair] <= 0) continue;
    for (std::uint32_t i = r.first; i < r.first + r.size; ++i) {
      if (p.route_comps[i] != component) continue;
      added_[r.rail_pair] += loss * p.route_weights[i] * r.probes / probes_[r.rail_pair];
      changed = true;
      break;
    }
  }
  return changed;
}

void UntracedExplainer::Explain(const InferenceProblem& p, std::vector<double>& untraced_explained,
                                std::vector<double>& ambiguous_good) const {
  const auto added = [&](std::uint32_t pair) {
    const std::uint32_t group = p.pairs[pair].rail_pair;
    return group < added_.size() ? added_[group] : 0.0;
  };
  for (std::size_t gi = 0; gi < p.groups.size(); ++gi) {
    const auto& g = p.groups[gi];
    if (g.traced) continue;
    const double a = added(g.pair);
    if (a > ambiguous_above_) {
      untraced_explained[gi] = g.bad;
    } else if (pair_failed_[g.pair] > 0) {
      // The pair's expected failures from the added loss, or from what its
      // peers lose, shared among its untraced failure groups by their failures.
      const double expected = std::max(a * static_cast<double>(p.pairs[g.pair].untraced),
                                       peers_ ? PeerExpected(p, g.pair) : 0.0);
      untraced_explained[gi] =
          std::min<double>(g.bad, expected * g.bad / static_cast<double>(pair_failed_[g.pair]));
    }
  }
  std::fill(ambiguous_good.begin(), ambiguous_good.end(), 0.0);
  for (std::uint32_t i = 0; i < p.pairs.size(); ++i) {
    const auto& t = p.pairs[i];
    if (added(i) <= ambiguous_above_ || t.untraced <= pair_failed_[i]) continue;
    const double good = static_cast<double>(t.untraced - pair_failed_[i]);
    if (t.src_rnic < ambiguous_good.size()) ambiguous_good[t.src_rnic] += good;
    if (t.dst_rnic < ambiguous_good.size()) ambiguous_good[t.dst_rnic] += good;
  }
}

double PoissonTail(double k, double lambda) {
  if (k <= 0) return 1.0;
  if (lambda <= 0) return 0.0;
  return boost::math::gamma_p(k, lambda);
}

double PoissonUpperBound(double k, double confidence) {
  // P(X <= k | lambda) = gamma_q(k + 1, lambda) falls as lambda rises.
  return boost::math::gamma_q_inv(std::max(k, 0.0) + 1, 1 - confidence);
}

double BinomialZ(double bad, double n, double p0) {
  if (n <= 0) return 0;
  const double sd = std::sqrt(n * p0 * (1 - p0));
  return (bad - n * p0) / std::max(sd, 1e-9);
}

Unexplained::Unexplained(const InferenceProblem& p, const Options& options)
    : p_(p),
      options_(options),
      untraced_(p, options.ambiguous_above, options.peers),
      explained_(p.groups.size(), 0),
      untraced_explained_(p.groups.size(), 0),
      ambiguous_good_(p.components, 0),
      ub_(p.components, 0),
      ub_u_(p.components, 0),
      counted_u_(p.components, 0),
      corroborated_(p.components, 0),
      traced_n_(p.components, 0) {
  std::vector<std::uint64_t> rounded;
  through_ = FailuresThrough(p, rounded);
  for (const auto& g : p.groups) {
    if (!g.traced) continue;
    for (std::uint32_t i = 0; i < g.size; ++i) {
      traced_n_[p.comps[g.first + i]] += static_cast<double>(g.bad) * p.weights[g.first + i];
    }
  }
  for (std::size_t c = 0; c < p.components; ++c) traced_n_[c] += static_cast<double>(p.good[c]);
  if (options.peers) untraced_.Explain(p, untraced_explained_, ambiguous_good_);
}

void Unexplained::Recount() {
  std::fill(ub_.begin(), ub_.end(), 0.0);
  std::fill(ub_u_.begin(), ub_u_.end(), 0.0);
  for (std::size_t gi = 0; gi < p_.groups.size(); ++gi) {
    if (explained_[gi]) continue;
    const auto& g = p_.groups[gi];
    const double rest = g.bad - untraced_explained_[gi];
    if (rest <= 0) continue;
    auto& into = g.traced ? ub_ : ub_u_;
    for (std::uint32_t i = 0; i < g.size; ++i) {
      into[p_.comps[g.first + i]] += rest * p_.weights[g.first + i];
    }
  }
  CountUntraced();
}

// The untraced failures each RNIC is judged on. An RNIC fails every path
// alike, traced or not; a fault of the fabric not blamed (yet), or one that
// eats whole 5-tuples (a blackhole's ports), fails a few of an RNIC's
// untraced 5-tuples in a burst, which on a clean fabric is conclusive on its
// own. So an RNIC with traced probes (OnUntraced: too few to judge it by)
// counts its untraced failures only when its traced ones are beyond chance
// at the background (P < 1 - kCorroboration), and then up to the rate they
// make plausible (their one-sided upper bound at kCorroboration, as for a
// held culprit's rate); the rest, with as many probes, are ambiguous.
void Unexplained::CountUntraced() {
  for (std::uint32_t c = 0; c < p_.components; ++c) {
    counted_u_[c] = ub_u_[c];
    corroborated_[c] = 0;
    if (!options_.corroborate || p_.is_link[c] || OnUntraced(c)) continue;
    counted_u_[c] = 0;
    auto [traced_bad, traced_n] = Traced(c);
    if (options_.traced_before != nullptr) {
      traced_bad += (*options_.traced_before)[c].first;
      traced_n += (*options_.traced_before)[c].second;
    }
    if (traced_bad < options_.min_corroborating || traced_n <= 0) continue;
    if (PoissonTail(traced_bad, traced_n * options_.background) >= 1 - kCorroboration) continue;
    corroborated_[c] = 1;
    const double untraced_n =
        ub_u_[c] + static_cast<double>(p_.good_untraced[c]) - ambiguous_good_[c];
    const double plausible =
        PoissonUpperBound(traced_bad, kCorroboration) / traced_n * std::max(untraced_n, 0.0);
    counted_u_[c] = std::min(ub_u_[c], plausible);
  }
}

void Unexplained::Explain(std::uint32_t c) {
  for (std::size_t gi = 0; gi < p_.groups.size(); ++gi) {
    const auto& g = p_.groups[gi];
    const auto* begin = p_.comps.data() + g.first;
    if (std::find(begin, begin + g.size, c) != begin + g.size) explained_[gi] = 1;
  }
  const double loss = through_[c] / (through_[c] + static_cast<double>(p_.good[c]));
  if (p_.is_link[c] && through_[c] > 0 && untraced_.Blamed(p_, c, loss)) {
    untraced_.Explain(p_, untraced_explained_, ambiguous_good_);
  }
}

std::pair<double, double> Unexplained::Counts(std::uint32_t c) const {
  if (p_.is_link[c] || (!OnUntraced(c) && !corroborated_[c])) return Traced(c);
  const double bad = ub_[c] + counted_u_[c];
  return {bad, bad + static_cast<double>(p_.good[c] + p_.good_untraced[c]) - ambiguous_good_[c]};
}

std::vector<double> Unexplained::Residual() const {
  std::vector<double> r(ub_);
  for (std::size_t c = 0; c < r.size(); ++c) r[c] += ub_u_[c];
  return r;
}

InferenceResult Infer(InferenceProblem& p, const InferenceParams& params) {
  const std::size_t n_comp = p.components;
  InferenceResult out;
  std::vector<char> blamed(n_comp, 0);
  Unexplained left(p, {.min_traced = static_cast<double>(params.min_traced)});
  FailuresThrough(p, out.failures);
  auto score_of = [&](std::uint32_t c) {
    const auto [bad, n] = left.Counts(c);
    return n > 0 ? bad * (bad / n) : 0.0;
  };

  for (;;) {
    left.Recount();
    if (out.culprits.size() >= params.max_culprits) break;

    std::uint32_t best = 0;
    double best_score = -1;
    for (std::uint32_t c = 0; c < n_comp; ++c) {
      const auto [bad, n] = left.Counts(c);
      if (blamed[c] || bad < params.min_failures) continue;
      const double s = score_of(c);
      if (s <= best_score) continue;
      if (BinomialZ(bad, n, params.background) < params.min_z) continue;
      best = c;
      best_score = s;
    }
    if (best_score < 0) break;

    Culprit cul;
    cul.component = best;
    const auto [bad, n] = left.Counts(best);
    cul.explained = static_cast<std::uint64_t>(std::llround(left.all(best)));
    cul.failures = out.failures[best];
    cul.good = p.good[best] + p.good_untraced[best];
    cul.loss = bad / n;
    cul.z = BinomialZ(bad, n, params.background);
    const double share =
        cul.failures ? static_cast<double>(cul.explained) / static_cast<double>(cul.failures) : 0;
    cul.confidence = std::clamp(share, 0.0, 1.0) * std::min(1.0, cul.z / (2 * params.min_z));
    out.culprits.push_back(cul);
    blamed[best] = 1;
    left.Explain(best);  // everything through the culprit is explained by it
  }

  out.score.resize(n_comp);
  for (std::uint32_t c = 0; c < n_comp; ++c) out.score[c] = score_of(c);
  out.residual = left.Residual();
  return out;
}

}  // namespace hostmesh::analysis
