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
  if (now_.links.size() <= link) now_.links.resize(std::size_t{link} + 1);
  if (now_.draws.size() <= sw) now_.draws.resize(std::size_t{sw} + 1, 0);
}

void RouteWatch::Use(LinkId link, SwitchId sw) {
  Grow(link, sw);
  now_.links[link] = {now_.draws[sw], 0};
}

void RouteWatch::AddTrace(const PathRecord& path, bool fresh, const FabricMap& fabric,
                          std::uint64_t key) {
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
    if (up != kUnknown && up_from_first(up)) {
      if (now_.draws.size() <= first) now_.draws.resize(std::size_t{first} + 1, 0);
      ++now_.draws[first];
    } else if (up == kUnknown && std::any_of(path.candidates.begin(), path.candidates.end(),
                                             [&](const PathCandidate& c) {
                                               return c.position == 1 && up_from_first(c.link);
                                             })) {
      // Cut short past the rail switch: how, its 5-tuple's next outcome says.
      if (pending_.size() >= max_pending_) {
        ++overflow_;
        CountCutShort(first, fabric);
      } else {
        const auto [it, inserted] = pending_.try_emplace(key, Pending{first, path.time_ns});
        if (!inserted) Settle(it->second.sw, false, fabric);  // its earlier draw: no outcome came
        it->second = {first, path.time_ns};
        if (now_.pending_at.size() <= first) now_.pending_at.resize(std::size_t{first} + 1, 0);
        ++now_.pending_at[first];
        pending_order_.emplace_back(path.time_ns, key);
      }
    }
  }
  // Any crossing shows a link in use, whichever way and at whatever tier.
  for (const LinkId l : links) {
    if (IsFabricLink(fabric, l)) Use(l, fabric.links[l].lower);
  }
}

void RouteWatch::CountCutShort(SwitchId sw, const FabricMap& fabric) {
  if (up_links_span_ != fabric.links.size() || up_links_.size() != fabric.switch_count) {
    up_links_.assign(fabric.switch_count, {});
    for (LinkId l = 0; l < fabric.links.size(); ++l) {
      if (IsFabricLink(fabric, l) && fabric.links[l].lower < up_links_.size()) {
        up_links_[fabric.links[l].lower].push_back(l);
      }
    }
    up_links_span_ = fabric.links.size();
  }
  if (sw >= up_links_.size()) return;
  for (const LinkId l : up_links_[sw]) {
    Grow(l, sw);
    ++now_.links[l].maybe_since_use;
  }
  if (now_.draws.size() <= sw) now_.draws.resize(std::size_t{sw} + 1, 0);
  ++now_.draws[sw];
}

void RouteWatch::Settle(SwitchId sw, bool delivered, const FabricMap& fabric) {
  --now_.pending_at[sw];
  if (!delivered) CountCutShort(sw, fabric);
}

void RouteWatch::Resolve(std::uint64_t key, bool delivered, const FabricMap& fabric) {
  const auto it = pending_.find(key);
  if (it == pending_.end()) return;
  const SwitchId sw = it->second.sw;
  pending_.erase(it);
  Settle(sw, delivered, fabric);
}

void RouteWatch::Expire(std::int64_t now_ns, const FabricMap& fabric) {
  while (!pending_order_.empty() && pending_order_.front().first < now_ns - pending_ttl_ns_) {
    const auto [time_ns, key] = pending_order_.front();
    pending_order_.pop_front();
    const auto it = pending_.find(key);
    if (it == pending_.end() || it->second.time_ns != time_ns) continue;  // resolved, or newer
    const SwitchId sw = it->second.sw;
    pending_.erase(it);
    Settle(sw, false, fabric);
  }
}

std::vector<std::uint32_t> RouteWatch::UpLinks(const FabricMap& fabric) const {
  std::vector<std::uint32_t> up_links(now_.draws.size(), 0);
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
    out[l] = sw < now_.draws.size() && up_links[sw] >= 2 && now_.draws[sw] > 0;
  }
  return out;
}

void RouteWatch::Close(std::int64_t end_ns) {
  if (end_ns <= closed_to_) return;
  closed_to_ = end_ns;
  while (closed_.size() >= kMaxClosed) closed_.erase(closed_.begin());
  closed_.emplace(end_ns, now_);
}

void RouteWatch::Forget(std::int64_t end_ns) {
  closed_.erase(closed_.begin(), closed_.lower_bound(end_ns));
}

std::vector<WithdrawnLink> RouteWatch::Unused(const FabricMap& fabric, double alpha,
                                              std::span<const char> failing,
                                              std::int64_t as_of_ns) const {
  // Kept at the first trace at or past as_of_ns (none yet: now).
  const auto kept = closed_.lower_bound(as_of_ns);
  const Counts& at = kept == closed_.end() ? now_ : kept->second;
  const std::vector<std::uint32_t> up_links = UpLinks(fabric);
  std::vector<WithdrawnLink> out;
  for (LinkId l = 0; l < fabric.links.size(); ++l) {
    if (!IsFabricLink(fabric, l)) continue;
    const SwitchId sw = fabric.links[l].lower;
    if (sw >= at.draws.size() || up_links[sw] < 2) continue;
    const LinkState s = l < at.links.size() ? at.links[l] : LinkState{};
    // Draws awaiting their outcome count as ones a failing link may have
    // picked (those from before its last use too: on the safe side).
    const bool may_eat = l < failing.size() && failing[l];
    const std::uint64_t waiting = may_eat && sw < at.pending_at.size() ? at.pending_at[sw] : 0;
    const std::uint64_t n = at.draws[sw] - s.draws_at_use + waiting;
    const double p = LowerTail(s.maybe_since_use + waiting, n, 1.0 / up_links[sw]);
    if (p >= alpha) continue;
    out.push_back({l, p});
  }
  return out;
}

}  // namespace hostmesh::analysis
