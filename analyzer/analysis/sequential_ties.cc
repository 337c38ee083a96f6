#include <algorithm>
#include <cmath>

#include "analyzer/analysis/sequential_pass.h"

// Rivals: candidates that explain the same failures as the one picked.
namespace hostmesh::analysis::sequential_internal {

bool SequentialPass::IsPartOf(std::uint32_t whole, std::uint32_t part) const {
  if (!HasParts(whole)) return false;
  const auto& of = parts_[whole];
  return std::find(of.begin(), of.end(), part) != of.end();
}

// A switch and its parts, or two components of one unit (a link's
// directions), are weighed against each other by the spread tests, not here.
bool SequentialPass::Related(std::uint32_t a, std::uint32_t b) const {
  return UnitOf(a) == UnitOf(b) || IsPartOf(a, b) || IsPartOf(b, a);
}

// Candidates about as strong as best_ (within the odds rival_confidence asks
// for) that could be named in its place: eligible, not held, not tied last
// window, ranked on traced probes and spread if made of parts.
std::vector<std::uint32_t> SequentialPass::Rivals() const {
  std::vector<std::uint32_t> rivals;
  const double conf = params_.rival_confidence;
  const double bar = best_strength_ - std::log(conf / (1 - conf));
  for (std::uint32_t c = 0; c < n_comp_; ++c) {
    if (c == best_ || blamed_[c] || deferred_[c] || left_.OnUntraced(c)) continue;
    const auto [bad, n] = Counts(c);
    if (n <= 0 || bad <= 0) continue;
    const auto* e = book_.Find(keys_[c]);
    if (e != nullptr && (e->culprit || e->deferred)) continue;
    if (Strength(e, bad, n) < bar || Related(best_, c)) continue;
    if (Eligible(e, bad, n, left_.Alone(c)) && Spread(c)) rivals.push_back(c);
  }
  return rivals;
}

// Whether `other` has no case left on the failures `left` leaves it.
bool SequentialPass::NoCaseLeft(std::uint32_t other, const Unexplained& left) const {
  const auto [bad, n] = left.Counts(other);
  return n <= 0 || bad <= 0 || !Eligible(book_.Find(keys_[other]), bad, n, left.Alone(other));
}

// Whether, once `c` explains its failures, `other` has no case left.
bool SequentialPass::TakesCaseOf(std::uint32_t c, std::uint32_t other) const {
  Unexplained with(left_);
  with.Explain(c);
  with.Recount();
  return NoCaseLeft(other, with);
}

// A fresh pick with a rival that explains the same failures as well (a 5%
// link's first few failures that all fell on the flows it shares with a
// neighbour: each takes the other's case away, and the window cannot say
// which): neither is named in this window. Their failures are set aside as
// explained, so that no switch or RNIC takes them instead, and neither's
// evidence counts them (UpdateTheRest); in the next window the fault's own
// failures, which the neighbour has only a share of, tell them apart. Named
// at once, the neighbour was held and kept taking its share of the fault's
// failures. Once only: a tie that lasts a second window (two links crossed
// by exactly the same flows) is the data's, and the stronger is named as
// before.
bool SequentialPass::DeferTie() {
  if (best_held_ || left_.OnUntraced(best_)) return false;
  const auto* e = book_.Find(keys_[best_]);
  if (e != nullptr && (e->culprit || e->deferred)) return false;
  const std::vector<std::uint32_t> rivals = Rivals();
  if (rivals.empty()) return false;
  Unexplained with_best(left_);
  with_best.Explain(best_);
  with_best.Recount();
  std::vector<std::uint32_t> tied;
  for (const std::uint32_t r : rivals) {
    if (NoCaseLeft(r, with_best) && TakesCaseOf(r, best_)) tied.push_back(r);
  }
  if (tied.empty()) return false;
  tied.push_back(best_);
  for (const std::uint32_t c : tied) deferred_[c] = 1;
  for (const std::uint32_t c : tied) left_.Explain(c);
  return true;
}

}  // namespace hostmesh::analysis::sequential_internal
