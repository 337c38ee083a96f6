#include "analyzer/analysis/route_watch.h"

#include <algorithm>
#include <cmath>

namespace hostmesh::analysis {
namespace {

bool IsFabricLink(const FabricMap& fabric, LinkId l) {
  return l < fabric.links.size() && fabric.links[l].lower != kUnknown &&
         fabric.links[l].upper != kUnknown;
}

// Chernoff bound on P(X <= c) for X ~ Binomial(n, p), c < n p: exact for c = 0.
double LowerTail(std::uint64_t c, std::uint64_t n, double p) {
  if (n == 0 || static_cast<double>(c) >= static_cast<double>(n) * p) return 1.0;
  if (c == 0) return std::pow(1.0 - p, static_cast<double>(n));
  const double a = static_cast<double>(c) / static_cast<double>(n);
  const double kl = a * std::log(a / p) + (1.0 - a) * std::log((1.0 - a) / (1.0 - p));
  return std::exp(-static_cast<double>(n) * kl);
}

}  // namespace

void RouteWatch::Grow(LinkId link, SwitchId sw) {
  if (state_.size() <= link) state_.resize(std::size_t{link} + 1);
  if (draws_.size() <= sw) draws_.resize(std::size_t{sw} + 1, 0);
}

void RouteWatch::Use(LinkId link, SwitchId sw) {
  Grow(link, sw);
  state_[link] = {draws_[sw], 0};
}

void RouteWatch::AddTrace(const PathRecord& path, bool fresh, const FabricMap& fabric) {
  const auto& links = path.links;
  if (links.size() < 2) return;
  const LinkId nic_link = links[0];
  const bool from_nic = nic_link < fabric.links.size() &&
                        fabric.links[nic_link].lower == kUnknown &&
                        fabric.links[nic_link].upper != kUnknown;
  const SwitchId first = from_nic ? fabric.links[nic_link].upper : kUnknown;
  // A fresh draw at the rail switch, counted before the crossings below so
  // that the link it picked is in use as of this draw. A silent hop past the
  // switch on a trace that went on (no candidates: rate-limited, not cut
  // short) says nothing of which way it went, so it is no draw at all.
  if (fresh && first != kUnknown) {
    const auto up_from_first = [&](LinkId l) {
      return IsFabricLink(fabric, l) && fabric.links[l].lower == first;
    };
    const LinkId up = links[1];
    bool drawn = up != kUnknown && up_from_first(up);
    if (up == kUnknown) {
      // Cut short past the rail switch: any of the listed ways may be the one.
      for (const PathCandidate& c : path.candidates) {
        if (c.position != 1 || !up_from_first(c.link)) continue;
        Grow(c.link, first);
        ++state_[c.link].maybe_since_use;
        drawn = true;
      }
    }
    if (drawn) {
      if (draws_.size() <= first) draws_.resize(std::size_t{first} + 1, 0);
      ++draws_[first];
    }
  }
  // Any crossing shows a link in use, whichever way and at whatever tier.
  for (const LinkId l : links) {
    if (IsFabricLink(fabric, l)) Use(l, fabric.links[l].lower);
  }
}

std::vector<std::uint32_t> RouteWatch::UpLinks(const FabricMap& fabric) const {
  std::vector<std::uint32_t> up_links(draws_.size(), 0);
  for (LinkId l = 0; l < fabric.links.size(); ++l) {
    if (IsFabricLink(fabric, l) && fabric.links[l].lower < up_links.size()) {
      ++up_links[fabric.links[l].lower];
    }
  }
  return up_links;
}

std::vector<char> RouteWatch::Watched(const FabricMap& fabric) const {
  const std::vector<std::uint32_t> up_links = UpLinks(fabric);
  std::vector<char> out(fabric.links.size(), 0);
  for (LinkId l = 0; l < fabric.links.size(); ++l) {
    if (!IsFabricLink(fabric, l)) continue;
    const SwitchId sw = fabric.links[l].lower;
    out[l] = sw < draws_.size() && up_links[sw] >= 2 && draws_[sw] > 0;
  }
  return out;
}

std::vector<WithdrawnLink> RouteWatch::Unused(const FabricMap& fabric, double alpha) const {
  const std::vector<std::uint32_t> up_links = UpLinks(fabric);
  std::vector<WithdrawnLink> out;
  for (LinkId l = 0; l < fabric.links.size(); ++l) {
    if (!IsFabricLink(fabric, l)) continue;
    const SwitchId sw = fabric.links[l].lower;
    if (sw >= draws_.size() || up_links[sw] < 2) continue;
    const LinkState s = l < state_.size() ? state_[l] : LinkState{};
    const std::uint64_t n = draws_[sw] - s.draws_at_use;
    const double p = LowerTail(s.maybe_since_use, n, 1.0 / up_links[sw]);
    if (p >= alpha) continue;
    out.push_back({l, p});
  }
  return out;
}

}  // namespace hostmesh::analysis
