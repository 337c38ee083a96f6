#include <algorithm>
#include <cmath>

#include "analyzer/analysis/sequential_pass.h"

// A switch against the RNICs at the ends of its failed probes: whether they
// lose as much on their other paths, which makes the failures theirs.
namespace hostmesh::analysis::sequential_internal {

void SequentialPass::RnicIncidence::Build(const InferenceProblem& p) {
  const auto index = [&p](auto count_into, std::vector<std::uint32_t>& first,
                          std::vector<std::uint32_t>& list) {
    first.assign(p.components + 1, 0);
    count_into([&](std::uint32_t rnic, std::uint32_t) { ++first[rnic + 1]; });
    for (std::size_t c = 0; c < p.components; ++c) first[c + 1] += first[c];
    list.resize(first.back());
    std::vector<std::uint32_t> at(first.begin(), first.end() - 1);
    count_into([&](std::uint32_t rnic, std::uint32_t i) { list[at[rnic]++] = i; });
  };
  index(
      [&p](auto&& f) {
        for (std::uint32_t i = 0; i < p.pairs.size(); ++i) {
          f(p.pairs[i].src_rnic, i);
          f(p.pairs[i].dst_rnic, i);
        }
      },
      pair_first, pairs);
  index(
      [&p](auto&& f) {
        for (std::uint32_t i = 0; i < p.groups.size(); ++i) {
          if (!p.groups[i].traced) continue;
          f(p.pairs[p.groups[i].pair].src_rnic, i);
          f(p.pairs[p.groups[i].pair].dst_rnic, i);
        }
      },
      group_first, groups);
  built = true;
}

namespace {
// Rounds of the fixed point in RateElsewhere: each moves the rate by less
// than the last; 20 settle it to well under a failure.
constexpr int kEndpointRounds = 20;

// The weight with which components [first, first + size) hold c.
double WeightOf(std::span<const std::uint32_t> comps, std::span<const float> weights,
                std::uint32_t first, std::uint32_t size, std::uint32_t c) {
  for (std::uint32_t i = first; i < first + size; ++i) {
    if (comps[i] == c) return weights[i];
  }
  return 0.0;
}

// The RNIC at the other end of a pair from r.
std::uint32_t OtherEnd(const InferenceProblem::PairTotals& pair, std::uint32_t r) {
  return pair.src_rnic == r ? pair.dst_rnic : pair.src_rnic;
}
}  // namespace

double SequentialPass::WeightIn(const InferenceProblem::Group& g, std::uint32_t c) const {
  return WeightOf(p_.comps, p_.weights, g.first, g.size, c);
}

template <typename F>
void SequentialPass::ForFailedThrough(std::uint32_t s, const Unexplained& left, F&& f) const {
  for (std::uint32_t gi = 0; gi < p_.groups.size(); ++gi) {
    const auto& g = p_.groups[gi];
    if (!g.traced || left.Explained(gi)) continue;
    if (const double w = WeightIn(g, s); w > 0) f(g, w);
  }
}

std::pair<double, double> SequentialPass::ProbesOf(std::uint32_t r,
                                                   std::span<const double> share) const {
  double through = 0, elsewhere = 0;
  for (std::uint32_t k = incidence_.pair_first[r]; k < incidence_.pair_first[r + 1]; ++k) {
    const auto& pair = p_.pairs[incidence_.pairs[k]];
    if (pair.rail_pair >= share.size()) continue;
    const auto traced = static_cast<double>(pair.traced);
    through += traced * share[pair.rail_pair];
    if (!blamed_[OtherEnd(pair, r)]) elsewhere += traced * (1 - share[pair.rail_pair]);
  }
  return {through, elsewhere};
}

// Per ECMP group, the share of its traced probes whose route crossed c.
std::vector<double> SequentialPass::ShareThrough(std::uint32_t c) const {
  std::vector<double> total(p_.rail_pairs, 0.0), via(p_.rail_pairs, 0.0);
  for (const auto& r : p_.routes) {
    if (r.rail_pair >= p_.rail_pairs) continue;
    total[r.rail_pair] += r.probes;
    via[r.rail_pair] += r.probes * WeightOf(p_.route_comps, p_.route_weights, r.first, r.size, c);
  }
  for (std::size_t i = 0; i < via.size(); ++i) via[i] = total[i] > 0 ? via[i] / total[i] : 0.0;
  return via;
}

// The RNICs at the ends of s's unexplained traced failures, sorted.
std::vector<std::uint32_t> SequentialPass::EndsOf(std::uint32_t s, const Unexplained& left) const {
  std::vector<std::uint32_t> ends;
  ForFailedThrough(s, left, [&](const InferenceProblem::Group& g, double) {
    ends.push_back(p_.pairs[g.pair].src_rnic);
    ends.push_back(p_.pairs[g.pair].dst_rnic);
  });
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  return ends;
}

// A fabric culprit's failures and probes in the window (traced).
SequentialPass::Tally SequentialPass::TallyOf(std::uint32_t c) const {
  Tally t{c, 0, static_cast<double>(p_.good[c])};
  for (const auto& g : p_.groups) {
    if (!g.traced) continue;
    const double bad = g.bad * WeightIn(g, c);
    t.bad += bad;
    t.n += bad;
  }
  return t;
}

// RNIC r's loss rate on its n probes that do not cross s (ProbesOf), but for
// the pairs with a blamed RNIC at the other end (theirs). A failure on a path
// a fabric culprit explains is r's with the chance that r failed it, at r's
// rate and the culprit's own (its rate without r's failures), as an EM finds
// it: a gray link's failures are the link's, and r's rate is what it loses on
// its other paths; a spine cleared but still held, whose failures are all r's
// and its like, takes none of them.
double SequentialPass::RateElsewhere(std::uint32_t r, std::uint32_t s, double n,
                                     std::span<const Tally> culprits,
                                     const Unexplained& left) const {
  if (n <= 0) return 0.0;
  // Each culprit's failures on r's groups: taken out of its own rate.
  std::vector<double> on_r(culprits.size(), 0.0);
  for (std::uint32_t k = incidence_.group_first[r]; k < incidence_.group_first[r + 1]; ++k) {
    const auto& g = p_.groups[incidence_.groups[k]];
    for (std::size_t i = 0; i < culprits.size(); ++i) {
      on_r[i] += g.bad * WeightIn(g, culprits[i].c);
    }
  }
  double free = 0, all = 0;                       // failures no culprit explains; all
  std::vector<std::pair<double, double>> shared;  // failures, the culprit's own rate
  for (std::uint32_t k = incidence_.group_first[r]; k < incidence_.group_first[r + 1]; ++k) {
    const std::uint32_t gi = incidence_.groups[k];
    const auto& g = p_.groups[gi];
    if (blamed_[OtherEnd(p_.pairs[g.pair], r)]) continue;
    const double bad = g.bad * (1 - WeightIn(g, s));
    if (bad <= 0) continue;
    all += bad;
    double rate = 0;
    if (left.Explained(gi)) {
      for (std::size_t i = 0; i < culprits.size(); ++i) {
        const Tally& t = culprits[i];
        if (WeightIn(g, t.c) <= 0 || t.n <= on_r[i]) continue;
        rate = std::max(rate, (t.bad - on_r[i]) / (t.n - on_r[i]));
      }
    }
    if (rate > 0) {
      shared.emplace_back(bad, rate);
    } else {
      free += bad;
    }
  }
  // Losing elsewhere at all: beyond chance at p0 on all its failures there.
  if (PoissonTail(all, n * p0_) >= window_alpha_) return 0.0;
  double rho = all / n;
  for (int i = 0; i < kEndpointRounds && !shared.empty(); ++i) {
    double mine = free;
    for (const auto& [bad, q] : shared) mine += bad * rho / (rho + q - rho * q);
    rho = mine / n;
  }
  return rho;
}

// Whether switch s's unexplained failures are its endpoints' rather than its
// own. Two accounts of the same probes, by Poisson likelihood:
//  - s loses at one rate (its own, fitted) on all its probes;
//  - each pair's probes lose at p0 plus what its two RNICs lose beyond p0 on
//    their probes that do not cross s (RateElsewhere), which is no rate
//    fitted to s's probes.
// A lossy switch fails its probes alike whatever their RNICs do elsewhere.
// RNIC faults whose failures on the other spines held culprits took leave
// their share through the one spine nothing explains, and two of them there
// looked spread over its links (stop 50's lasting timeline): the spine was
// named, then held, taking their failures through it for minutes.
bool SequentialPass::EndpointsExplain(std::uint32_t s, const Unexplained& left) const {
  const auto [bad, n] = left.Counts(s);
  if (bad <= 0 || n <= 0) return false;
  if (!incidence_.built) incidence_.Build(p_);
  const std::vector<std::uint32_t> ends = EndsOf(s, left);
  std::vector<Tally> culprits;
  for (const Chosen& ch : chosen_) {
    if (p_.is_link[ch.c]) culprits.push_back(TallyOf(ch.c));
  }
  const std::vector<double> share = ShareThrough(s);
  std::vector<double> excess(ends.size(), 0.0);
  double expected = p0_ * n;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    const auto [through, elsewhere] = ProbesOf(ends[i], share);
    excess[i] = std::max(0.0, RateElsewhere(ends[i], s, elsewhere, culprits, left) - p0_);
    expected += excess[i] * through;
  }
  const auto excess_of = [&](std::uint32_t r) {
    return excess[static_cast<std::size_t>(std::lower_bound(ends.begin(), ends.end(), r) -
                                           ends.begin())];
  };
  double rnic_ll = -expected;
  ForFailedThrough(s, left, [&](const InferenceProblem::Group& g, double w) {
    const auto& pair = p_.pairs[g.pair];
    rnic_ll += g.bad * w * std::log(p0_ + excess_of(pair.src_rnic) + excess_of(pair.dst_rnic));
  });
  const double switch_ll = bad * std::log(bad / n) - bad;
  return rnic_ll >= switch_ll;
}

}  // namespace hostmesh::analysis::sequential_internal
