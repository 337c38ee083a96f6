// How the window judge reads routing changes: links routing withdrew, switches
// it avoids, and the failures route churn leaves on a detour while a link
// flaps (WindowJudge's members, apart from the judging of window.cc).
#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "analyzer/analysis/component_index.h"
#include "analyzer/analysis/window_judge.h"

namespace hostmesh::analysis {

// A withdrawn link is down whatever its probes say: they no longer cross it
// (those that seem to are on paths traced before routing moved them). A
// switch all of whose watched up-links into it (two or more) are avoided is
// down itself, or cut off: one fault, named as the switch, its links not
// named beside it, once one of two things holds:
// - two or more of those links are withdrawn (one could be a cable);
// - the chance that two or more of them are still in use is below
//   route_withdrawn_alpha, the bar of a single link: the draws at different
//   rail switches are independent, so it is at most the product of the two
//   largest p-values. A dead spine rehashes about a 1/k share of its rail
//   switches' 5-tuples; each of those draws counts at every rail switch at
//   once this way, where one link's bar (96 draws at k = 4) can take minutes
//   of rotation on a small fabric.
// Each is a culprit of the ranking too, so the link and switch views say
// what the incidents say.
WindowJudge::UnusedSwitches WindowJudge::SwitchesOf(
    const std::vector<WithdrawnLink>& unused) const {
  const std::size_t switches = fabric_.switch_count;
  const std::vector<char> watched = routes_.Watched(fabric_);
  std::vector<std::uint32_t> watched_into(switches, 0);
  UnusedSwitches out{std::vector<char>(switches, 0), std::vector<std::uint32_t>(switches, 0),
                     std::vector<double>(switches, 0), std::vector<double>(switches, 0)};
  for (LinkId l = 0; l < watched.size(); ++l) {
    if (watched[l] && fabric_.links[l].upper < switches) ++watched_into[fabric_.links[l].upper];
  }
  for (const WithdrawnLink& g : unused) {
    const SwitchId up = fabric_.links[g.link].upper;
    if (up >= switches) continue;
    ++out.count[up];
    if (g.p_value > out.worst_p[up]) {
      out.second_p[up] = out.worst_p[up];
      out.worst_p[up] = g.p_value;
    } else {
      out.second_p[up] = std::max(out.second_p[up], g.p_value);
    }
  }
  for (SwitchId s = 0; s < switches; ++s) {
    out.all[s] = out.count[s] >= 2 && out.count[s] == watched_into[s];
  }
  return out;
}

// A link that eats its probes eats its traces too, so the draws awaiting
// their outcome may have picked it; nothing fails on a link routing withdrew.
std::vector<char> WindowJudge::FailingLinks(const Localization& loss) const {
  std::vector<char> failing(fabric_.links.size(), 0);
  for (const Suspect& s : loss.culprits) {
    if (s.component.kind == Component::Kind::kLink && s.component.link < failing.size()) {
      failing[s.component.link] = 1;
    }
  }
  std::vector<char> named(fabric_.switch_count, 0);
  for (const SwitchId sw : loss.culprit_switches) {
    if (sw < named.size()) named[sw] = 1;
  }
  const auto is_named = [&](SwitchId sw) { return sw < named.size() && named[sw]; };
  for (LinkId l = 0; l < fabric_.links.size(); ++l) {
    if (is_named(fabric_.links[l].lower) || is_named(fabric_.links[l].upper)) failing[l] = 1;
  }
  return failing;
}

WindowJudge::UnusedSwitches WindowJudge::NoteAvoided(const std::vector<char>& failing,
                                                     std::int64_t end_ns,
                                                     Coverage* coverage) const {
  const std::vector<WithdrawnLink> avoided =
      routes_.Unused(fabric_, config_.route_avoided_alpha, failing, end_ns);
  for (const WithdrawnLink& a : avoided) coverage->avoided.push_back(a.link);
  std::sort(coverage->avoided.begin(), coverage->avoided.end());
  UnusedSwitches switches = SwitchesOf(avoided);
  for (SwitchId s = 0; s < switches.all.size(); ++s) {
    if (switches.all[s]) coverage->avoided_switches.push_back(s);
  }
  return switches;
}

void WindowJudge::NameWithdrawnLinks(const UnusedSwitches& avoided,
                                     const std::vector<char>& failing, std::int64_t end_ns,
                                     Localization* loss) const {
  const std::vector<WithdrawnLink> gone = routes_.Withdrawn(fabric_, failing, end_ns);
  if (gone.empty() &&
      std::none_of(avoided.all.begin(), avoided.all.end(), [](char a) { return a; })) {
    return;
  }
  const std::size_t switches = fabric_.switch_count;
  const UnusedSwitches withdrawn = SwitchesOf(gone);
  std::vector<char> down(switches, 0);
  for (SwitchId s = 0; s < switches && s < avoided.all.size(); ++s) {
    if (!avoided.all[s]) continue;
    const double in_use = avoided.worst_p[s] * avoided.second_p[s];
    const bool links_gone = withdrawn.count[s] >= 2;
    down[s] = links_gone || in_use < config_.route_withdrawn_alpha;
    if (down[s]) NameDownSwitch(s, links_gone ? withdrawn.worst_p[s] : in_use, loss);
  }
  // Whether `is` holds for either end of link l.
  const auto either_end = [&](LinkId l, const auto& is) {
    if (l >= fabric_.links.size()) return false;
    return is(fabric_.links[l].lower) || is(fabric_.links[l].upper);
  };
  const auto on_down_switch = [&](LinkId l) {
    return either_end(l, [&](SwitchId s) { return s < switches && down[s]; });
  };
  std::erase_if(loss->culprits, [&](const Suspect& s) {
    return s.component.kind == Component::Kind::kLink && on_down_switch(s.component.link);
  });
  for (LinkRank& r : loss->links) {
    if (on_down_switch(r.link)) r.culprit = false;
  }
  // A switch named by its loss explains a withdrawn link of its own: its
  // links go one by one as routing reacts, and each named alone would open an
  // incident beside the switch's, merged into it once two are withdrawn.
  const auto on_culprit_switch = [&](LinkId l) {
    const auto& named = loss->culprit_switches;
    return either_end(
        l, [&](SwitchId s) { return std::find(named.begin(), named.end(), s) != named.end(); });
  };
  for (const WithdrawnLink& g : gone) {
    if (on_down_switch(g.link) || on_culprit_switch(g.link)) continue;
    auto it = std::find_if(loss->culprits.begin(), loss->culprits.end(), [&](const Suspect& s) {
      return s.component.kind == Component::Kind::kLink && s.component.link == g.link;
    });
    if (it == loss->culprits.end()) {
      Suspect s;
      s.component.link = g.link;
      s.component.direction = kBothWays;
      s.raw_confidence = 1.0 - g.p_value;
      s.confidence = config_.confidence.loss.Apply(s.raw_confidence);
      loss->culprits.push_back(std::move(s));
      it = loss->culprits.end() - 1;
    }
    it->routed_around = true;
    it->loss = 1.0;
    auto rank = std::find_if(loss->links.begin(), loss->links.end(),
                             [&](const LinkRank& r) { return r.link == g.link; });
    if (rank == loss->links.end()) {
      // Nothing crosses it any more, so nothing ranked it.
      loss->links.push_back(LinkRank{.link = g.link, .loss = 1.0});
      rank = loss->links.end() - 1;
    }
    rank->culprit = true;
  }
  std::stable_partition(loss->links.begin(), loss->links.end(),
                        [](const LinkRank& r) { return r.culprit; });
}

void WindowJudge::NameDownSwitch(SwitchId id, double p_value, Localization* loss) const {
  auto rank = std::find_if(loss->switches.begin(), loss->switches.end(),
                           [&](const SwitchRank& r) { return r.id == id; });
  if (rank == loss->switches.end()) {
    loss->switches.push_back(SwitchRank{.id = id});
    rank = loss->switches.end() - 1;
  }
  rank->culprit = true;
  rank->routed_around = true;
  rank->loss = 1.0;
  rank->raw_confidence = std::max(rank->raw_confidence, 1.0 - p_value);
  rank->confidence = config_.confidence.loss.Apply(rank->raw_confidence);
  if (std::find(loss->culprit_switches.begin(), loss->culprit_switches.end(), id) ==
      loss->culprit_switches.end()) {
    loss->culprit_switches.push_back(id);
  }
  std::stable_partition(loss->switches.begin(), loss->switches.end(),
                        [](const SwitchRank& r) { return r.culprit; });
}

// Route churn: while a flapping link is down, routing moves flows off it and
// back, so a 5-tuple traced in one phase is probed in the other and its
// failures land on a link of the detour, exactly while that link is down.
// The detour need not share a switch with the flapping link: a path from
// rail 2 to rail 4 whose spine uplink flaps is traced over another spine,
// down into rail 4. A culprit link whose failures were (almost) all sent
// while culprits that went down in the window (a down episode: flapping, or
// the first down and back of a flap yet to be named) and explain more were
// down, inside the episodes of any of them (two flaps may share a detour), is
// a shadow: named with them, not alone. Without outcomes to compare (one of
// the two not watched yet: the window a flap starts in, no flap verdict, no
// timing), a weaker link sharing a switch with the one that went down is
// held back so the next window can tell, unless it was named before that
// one went down; a fault of its own fails outside the flaps too and is
// named then, a window late.
void WindowJudge::DropChurnShadows(const WindowAccumulator& w, double background,
                                   Localization* loss) {
  std::vector<Suspect>& culprits = loss->culprits;
  const FlapRecorder& flaps = w.flaps();
  const ChurnTest churn{
      .background = background,
      .min_excess = sequential_.indifference * sequential_.min_loss,
      .own_alpha = config_.churn_own_alpha,
      .inside_share = config_.churn_inside,
  };
  // Strongest first, so a link's own standing is settled before it is
  // weighed as the down link of weaker ones.
  std::vector<std::size_t> order(culprits.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return culprits[x].explained > culprits[y].explained;
  });
  const auto is_link = [&](std::size_t i) {
    return culprits[i].component.kind == Component::Kind::kLink;
  };
  std::vector<char> shadow(culprits.size(), 0);
  std::vector<LinkId> downs;
  for (std::size_t bi = 0; bi < order.size(); ++bi) {
    const std::size_t b = order[bi];
    if (!is_link(b)) continue;
    const LinkId link = culprits[b].component.link;
    const bool b_watched = flaps.Watches(link);
    downs.clear();
    std::optional<std::size_t> by;
    for (std::size_t ai = 0; ai < bi; ++ai) {
      const std::size_t a = order[ai];
      const Suspect& down = culprits[a];
      if (!is_link(a) || shadow[a] || down.explained <= culprits[b].explained) continue;
      const bool unjudged = !flaps.Watches(down.component.link);
      if (down.flaps == 0 && !down.flapping && !unjudged) continue;
      if (!unjudged && b_watched) {
        downs.push_back(down.component.link);
      } else if (!by && !(unjudged && b_watched) && ShareASwitch(link, down.component.link)) {
        by = a;
      }
    }
    if (!by && !downs.empty()) {
      const auto overlap = flaps.FailuresWhileDown(link, downs);
      if (!overlap || !IsChurn(*overlap, churn)) continue;
      // Its shadow is shown beside the down link it overlaps most.
      std::uint32_t most = 0;
      for (std::size_t ai = 0; ai < bi; ++ai) {
        const std::size_t a = order[ai];
        if (std::find(downs.begin(), downs.end(), culprits[a].component.link) == downs.end() ||
            !is_link(a)) {
          continue;
        }
        const LinkId one[] = {culprits[a].component.link};
        const auto o = flaps.FailuresWhileDown(link, one);
        if (!by || (o && o->inside > most)) {
          by = a;
          most = o ? o->inside : 0;
        }
      }
    }
    if (!by) continue;
    shadow[b] = 1;
    culprits[*by].churn_shadows.push_back(link);
  }
  ForgetShadows(shadow, loss);
}

// Shadows (by culprit index) are no culprits, and keep no evidence.
void WindowJudge::ForgetShadows(const std::vector<char>& shadow, Localization* loss) {
  std::vector<Suspect>& culprits = loss->culprits;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < culprits.size(); ++i) {
    if (!shadow[i]) {
      if (kept != i) culprits[kept] = std::move(culprits[i]);  // never onto itself
      ++kept;
      continue;
    }
    const LinkId link = culprits[i].component.link;
    for (LinkRank& r : loss->links) {
      if (r.link == link) r.culprit = false;
    }
    // Its failures are the flapping link's: the evidence they gave it goes,
    // or it would be named alone the window the flapping stops.
    for (const std::uint64_t key :
         {ComponentIndex::DirectedKey(link, true), ComponentIndex::DirectedKey(link, false),
          ComponentIndex::BothWaysKey(link)}) {
      if (EvidenceBook::Entry* e = evidence_.FindMutable(key)) *e = EvidenceBook::Entry{};
    }
  }
  culprits.resize(kept);
}

}  // namespace hostmesh::analysis
