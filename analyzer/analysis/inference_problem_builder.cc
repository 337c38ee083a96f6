#include "analyzer/analysis/inference_problem_builder.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <span>
#include <unordered_map>

namespace hostmesh::analysis {
namespace {

// The network components a fabric path crosses: each link one way (by
// position: the first half climbs, the second comes down) and both ways, and
// the switches.
void MiddleComponents(std::span<const LinkId> middle, const FabricMap& fabric, const auto& ix,
                      std::vector<std::uint32_t>& out) {
  out.clear();
  const std::size_t half = middle.size() / 2;
  for (std::size_t i = 0; i < middle.size(); ++i) {
    const LinkId l = middle[i];
    if (l == kUnknown || l >= ix.links) continue;
    out.push_back(ix.LinkComponent(l, i < half));
    out.push_back(ix.BothWaysComponent(l));
    if (l >= fabric.links.size()) continue;
    for (SwitchId s : {fabric.links[l].lower, fabric.links[l].upper}) {
      if (s >= ix.switches) continue;
      const std::uint32_t c = ix.SwitchComponent(s);
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  }
}

// The components an ambiguous position of a fabric path may be (a trace cut
// short lists every way on): its candidate links, each one way and both ways,
// and their switches. With `weights` (parallel to out, the path's known
// components already in at 1), each gets the chance that the failure crossed
// it: the candidates of a position share it in proportion to their loss
// rates from the window's whole paths (`rate` of one-way link components), a
// switch the sum over its candidates there (at most 1; the largest over
// positions). A gray link, which eats every trace across it and passes no
// probe, takes nearly all; healthy siblings, or the traces an ICMP rate limit
// cut short on a large fabric, share evenly: 1/k each, so the failures of
// many cut-short paths do not land whole on every spine. Successes are shared
// the same way by the chance each candidate passes a probe (`rate` then
// gives that). Once a culprit is chosen among them, it explains the failure
// like a link the path names.
void CandidateComponents(std::span<const LinkId> middle, std::span<const PathCandidate> candidates,
                         const FabricMap& fabric, const auto& ix, std::vector<std::uint32_t>& out,
                         std::vector<float>* weights = nullptr,
                         const std::function<double(std::uint32_t)>& rate = {}) {
  const std::size_t half = middle.size() / 2;
  std::vector<std::pair<std::uint32_t, double>> here;  // one position's components
  const auto add = [&here](std::uint32_t c, double w) {
    for (auto& [comp, sum] : here) {
      if (comp == c) {
        sum += w;
        return;
      }
    }
    here.emplace_back(c, w);
  };
  for (std::uint32_t pos = 0; pos < middle.size(); ++pos) {
    double total = 0;
    for (const PathCandidate& cand : candidates) {
      if (cand.position != pos || cand.link >= ix.links) continue;
      total += rate ? rate(ix.LinkComponent(cand.link, pos < half)) : 1.0;
    }
    if (total <= 0) continue;
    here.clear();
    for (const PathCandidate& cand : candidates) {
      const LinkId l = cand.link;
      if (cand.position != pos || l >= ix.links) continue;
      const std::uint32_t one_way = ix.LinkComponent(l, pos < half);
      const double share = (rate ? rate(one_way) : 1.0) / total;
      add(one_way, share);
      add(ix.BothWaysComponent(l), share);
      if (l >= fabric.links.size()) continue;
      for (SwitchId sw : {fabric.links[l].lower, fabric.links[l].upper}) {
        if (sw < ix.switches) add(ix.SwitchComponent(sw), share);
      }
    }
    for (const auto& [c, sum] : here) {
      const auto w = static_cast<float>(std::min(sum, 1.0));
      const auto at = std::find(out.begin(), out.end(), c);
      if (at == out.end()) {
        out.push_back(c);
        if (weights != nullptr) weights->push_back(w);
      } else if (weights != nullptr) {
        float& known = (*weights)[static_cast<std::size_t>(at - out.begin())];
        known = std::max(known, w);
      }
    }
  }
}

}  // namespace

namespace {

// Rounds of sharing a whole path's failures among its links by their rates
// (ProblemBuilder::EstimateLinkRates), from a start where each link's rate is
// its own: the first brings links that share paths at one rate to it (each
// started with the whole path's), the next two settle what is left.
constexpr int kShareRounds = 3;

// BuildProblem's phases, sharing what they learn: the ECMP groups, the loss
// rates of whole paths, the routes added. Scratch vectors are reused.
class ProblemBuilder {
 public:
  ProblemBuilder(const WindowAccumulator& w, const PathTable& paths, const FabricMap& fabric,
                 const ComponentIndex& ix, const FailureGroups& groups, bool slow,
                 InferenceProblem* p)
      : w_(w), paths_(paths), fabric_(fabric), ix_(ix), groups_(groups), slow_(slow), p_(p) {}
  // fails_ and passes_ capture `this`: a copy would read the original's rates.
  ProblemBuilder(const ProblemBuilder&) = delete;
  ProblemBuilder& operator=(const ProblemBuilder&) = delete;

  void Build() {
    p_->Reset(ix_.components());
    std::fill(p_->is_link.begin(), p_->is_link.begin() + static_cast<std::ptrdiff_t>(ix_.network()),
              true);
    CountWholePaths();
    ShareCutShortSuccesses();
    CountPairs();
    AddRoutes();
    AddFailureGroups();
  }

 private:
  // Probes that passed a fabric path, of this window's kind.
  std::uint64_t Good(std::size_t m) const {
    const auto& ok = w_.middle_ok();
    return slow_ ? ok[m] - w_.middle_slow()[m] : ok[m];
  }

  // ECMP groups: NIC pairs between the same two rail switches (the first
  // switch of each NIC's link, learned from paths); a NIC whose link is not
  // known yet counts by its rail (one pod's fabrics alike).
  std::uint32_t EcmpGroup(HostId h, NicId s, NicId d) {
    const auto first_switch = [&](NicId n) -> std::uint64_t {
      const LinkId l = paths_.NicLink(h, n);
      if (l < fabric_.links.size() && fabric_.links[l].upper != kUnknown) {
        return fabric_.links[l].upper;
      }
      return (std::uint64_t{1} << 31) | ClampedRailOf(fabric_, h, n);
    };
    const std::uint64_t key = (first_switch(s) << 32) | first_switch(d);
    return ecmp_groups_.emplace(key, static_cast<std::uint32_t>(ecmp_groups_.size())).first->second;
  }

  // Loss rates from whole paths (no candidates), to share a cut-short path's
  // probes among its candidates: (failures + 1) / (probes + 2), so a link no
  // whole path crossed (a gray link eats its traces) starts at 1/2.
  void CountWholePaths() {
    whole_failed_.assign(p_->components, 0);
    whole_good_.assign(p_->components, 0);
    for (std::size_t m = 0; m < w_.middle_ok().size(); ++m) {
      const std::uint64_t good = Good(m);
      if (good == 0) continue;
      MiddleComponents(paths_.Middle(static_cast<MiddleId>(m)), fabric_, ix_, comps_);
      const bool whole = paths_.Candidates(static_cast<MiddleId>(m)).empty();
      for (const std::uint32_t c : comps_) {
        p_->good[c] += good;
        if (whole) whole_good_[c] += static_cast<double>(good);
      }
    }
    whole_groups_.clear();
    for (std::size_t i = 0; i < groups_.keys.size(); ++i) {
      const GroupKey g = DecodeGroup(groups_.keys[i]);
      if (g.middle == PathTable::kNoPath || !paths_.Candidates(g.middle).empty()) continue;
      const auto count = static_cast<double>(groups_.counts[i]);
      whole_groups_.push_back({g.middle, count});
      MiddleComponents(paths_.Middle(g.middle), fabric_, ix_, comps_);
      for (const std::uint32_t c : comps_) whole_failed_[c] += count;
    }
    EstimateLinkRates();
  }

  // Pass 0's rate of a one-way link: every failure of its whole paths.
  double CountedWhole(std::uint32_t c) const {
    return (whole_failed_[c] + 1) / (whole_failed_[c] + whole_good_[c] + 2);
  }

  // Calls f(c) for each one-way link of a whole path that lost at least as
  // much as every other (by CountedWhole).
  template <typename F>
  void ForLossiest(std::span<const LinkId> links, F&& f) const {
    const std::size_t half = links.size() / 2;
    double most = 0;
    for (std::size_t k = 0; k < links.size(); ++k) {
      if (links[k] < ix_.links)
        most = std::max(most, CountedWhole(ix_.LinkComponent(links[k], k < half)));
    }
    for (std::size_t k = 0; k < links.size(); ++k) {
      if (links[k] >= ix_.links) continue;
      const std::uint32_t c = ix_.LinkComponent(links[k], k < half);
      if (CountedWhole(c) >= most) f(c);
    }
  }

  // The one-way links' loss rates, from whole paths, that share a cut-short
  // path's probes among its candidates (fails_, passes_). Counted whole (pass
  // 0), a link on the paths of a far lossier one carries that link's loss in
  // its own rate: the downlinks from a spine past a rail uplink losing 21.7%
  // (1 in 7 of their flows through it) showed 3% where their own loss was
  // 0.1%, took half of every cut-short failure they were a candidate for,
  // which the uplink, no candidate there, could never explain, and at 10,000
  // hosts the seven were named beside it. So each link starts from its rate
  // over the whole paths on which no other link lost more (its own evidence,
  // the lossier link's taken out), and a whole path's failures are then
  // shared among its links by those rates, the chance each caused them
  // (rounds of EM for independent losses, which alone creep: a round takes
  // off a borrowed rate only the share of the borrower's whole paths that do
  // not cross the lossier link). A link with no such path keeps pass 0's,
  // and few probes lean to the ambient rate (Shrunk).
  void EstimateLinkRates() {
    const std::size_t n = 2 * ix_.links;
    std::vector<double> own_failed(n, 0), own_n(n, 0);
    for (std::size_t m = 0; m < w_.middle_ok().size(); ++m) {
      const std::uint64_t good = Good(m);
      if (good == 0 || !paths_.Candidates(static_cast<MiddleId>(m)).empty()) continue;
      ForLossiest(paths_.Middle(static_cast<MiddleId>(m)),
                  [&](std::uint32_t c) { own_n[c] += static_cast<double>(good); });
    }
    // And the ambient rate of a link: each whole failure once, over every
    // link's whole probes.
    double failures = 0, probes = 0;
    for (const WholeGroup& g : whole_groups_) {
      failures += g.count;
      ForLossiest(paths_.Middle(g.middle), [&](std::uint32_t c) {
        own_failed[c] += g.count;
        own_n[c] += g.count;
      });
    }
    for (std::uint32_t c = 0; c < n; ++c) probes += whole_failed_[c] + whole_good_[c];
    ambient_ = std::max(1e-6, probes > 0 ? failures / probes : 1e-6);
    rate_.resize(n);
    for (std::uint32_t c = 0; c < n; ++c) {
      rate_[c] = own_n[c] > 0 ? Shrunk(own_failed[c], own_n[c]) : CountedWhole(c);
    }
    for (int round = 0; round < kShareRounds; ++round) ShareWholePathFailures();
  }

  // A rate from few probes leans to the ambient one (a prior worth one
  // failure at it): (f + 1) / (n + 2) put a floor of 1/n under links with few
  // whole probes, several times the ambient loss, which drew cut-short
  // failures to them. A link no whole path crossed keeps 1/2 (CountedWhole):
  // a gray link eats its traces.
  double Shrunk(double failed, double probes) const {
    return (failed + 1) / (probes + 1 / ambient_);
  }

  // One round: each whole path's failures shared among its links by rate_.
  void ShareWholePathFailures() {
    shared_.assign(rate_.size(), 0.0);
    for (const WholeGroup& g : whole_groups_) {
      const auto links = paths_.Middle(g.middle);
      const std::size_t half = links.size() / 2;
      double total = 0;
      for (std::size_t k = 0; k < links.size(); ++k) {
        if (links[k] < ix_.links) total += rate_[ix_.LinkComponent(links[k], k < half)];
      }
      if (total <= 0) continue;
      for (std::size_t k = 0; k < links.size(); ++k) {
        if (links[k] >= ix_.links) continue;
        const std::uint32_t c = ix_.LinkComponent(links[k], k < half);
        shared_[c] += g.count * rate_[c] / total;
      }
    }
    for (std::uint32_t c = 0; c < rate_.size(); ++c) {
      const double probes = whole_failed_[c] + whole_good_[c];
      rate_[c] = probes > 0 ? Shrunk(shared_[c], probes) : CountedWhole(c);
    }
  }

  // A cut-short path's successes: shared among its candidates by the chance
  // each passes a probe (a gray link takes few), as its failures are (AddFailureGroups).
  void ShareCutShortSuccesses() {
    std::vector<float> weights;
    std::vector<double> shared(p_->components, 0);
    for (std::size_t m = 0; m < w_.middle_ok().size(); ++m) {
      const std::uint64_t good = Good(m);
      const auto candidates = paths_.Candidates(static_cast<MiddleId>(m));
      if (good == 0 || candidates.empty()) continue;
      const auto links = paths_.Middle(static_cast<MiddleId>(m));
      MiddleComponents(links, fabric_, ix_, comps_);
      const std::size_t known = comps_.size();
      weights.assign(known, 1.0f);
      CandidateComponents(links, candidates, fabric_, ix_, comps_, &weights, passes_);
      for (std::size_t i = known; i < comps_.size(); ++i) {
        shared[comps_[i]] += static_cast<double>(good) * weights[i];
      }
    }
    for (std::size_t c = 0; c < shared.size(); ++c) {
      p_->good[c] += static_cast<std::uint64_t>(std::llround(shared[c]));
    }
  }

  // The NIC pairs: their RNICs' successes, traced and not, and ECMP group.
  void CountPairs() {
    p_->pairs.resize(ix_.pair.size());
    for (LinkId l = 0; l < ix_.links && l < fabric_.links.size(); ++l) {
      if (fabric_.links[l].lower == kUnknown) continue;  // a NIC link
      p_->ambient[ix_.LinkComponent(l, true)] = true;
      p_->ambient[ix_.LinkComponent(l, false)] = true;
    }
    const auto& hosts = w_.hosts();
    for (HostId h = 0; h < hosts.size(); ++h) {
      const auto& hw = hosts[h];
      for (NicId s = 0; s < hw.nics; ++s) {
        for (NicId d = 0; d < hw.nics; ++d) {
          const PairCounts& c = hw.Pair(s, d);
          if (c.total() != 0) CountPair(h, s, d, c);
        }
      }
    }
    p_->rail_pairs = ecmp_groups_.size();
  }

  void CountPair(HostId h, NicId s, NicId d, const PairCounts& c) {
    const std::uint64_t good =
        slow_ ? std::uint64_t{c.traced_ok} - c.traced_slow + c.untraced_ok - c.untraced_slow
              : std::uint64_t{c.traced_ok} + c.untraced_ok;
    const std::uint64_t untraced =
        slow_ ? std::uint64_t{c.untraced_ok} - c.untraced_slow : std::uint64_t{c.untraced_ok};
    for (NicId n : {s, d}) {
      p_->good[ix_.RnicComponent(h, n)] += good - untraced;
      p_->good_untraced[ix_.RnicComponent(h, n)] += untraced;
    }
    auto& t = p_->pairs[ix_.Pair(h, s, d)];
    t.rail_pair = EcmpGroup(h, s, d);
    t.src_rnic = ix_.RnicComponent(h, s);
    t.dst_rnic = ix_.RnicComponent(h, d);
    t.traced = slow_ ? c.traced_ok : std::uint64_t{c.traced_ok} + c.traced_timeout;
    t.untraced = slow_ ? c.untraced_ok : std::uint64_t{c.untraced_ok} + c.untraced_timeout;
  }

  // Routes: every fabric path of the window once, under the ECMP group of its
  // two ends (the lower switch of its first and of its last link).
  void AddRoutes() {
    const auto& ok = w_.middle_ok();
    route_probes_.assign(ok.begin(), ok.end());
    for (std::size_t i = 0; i < groups_.keys.size(); ++i) {
      const MiddleId m = DecodeGroup(groups_.keys[i]).middle;
      if (m == PathTable::kNoPath) continue;
      if (m >= route_probes_.size()) route_probes_.resize(std::size_t{m} + 1, 0);
      route_probes_[m] += static_cast<double>(groups_.counts[i]);
    }
    for (std::size_t m = 0; m < ok.size(); ++m) {
      if (ok[m] > 0) AddRoute(static_cast<MiddleId>(m));
    }
    for (const std::uint64_t key : groups_.keys) {
      const MiddleId m = DecodeGroup(key).middle;
      if (m != PathTable::kNoPath) AddRoute(m);
    }
  }

  std::uint64_t EndSwitch(MiddleId m, std::size_t at) const {
    const auto links = paths_.Middle(m);
    LinkId l = links[at];
    if (l == kUnknown) {
      for (const PathCandidate& c : paths_.Candidates(m)) {
        if (c.position == at) l = c.link;
      }
    }
    return l < fabric_.links.size() ? fabric_.links[l].lower : kUnknown;
  }

  void AddRoute(MiddleId m) {
    if (m >= routed_.size()) routed_.resize(std::size_t{m} + 1, 0);
    if (routed_[m]) return;
    routed_[m] = 1;
    const auto links = paths_.Middle(m);
    if (links.empty()) return;
    const std::uint64_t a = EndSwitch(m, 0), b = EndSwitch(m, links.size() - 1);
    if (a == kUnknown || b == kUnknown) return;
    const auto it = ecmp_groups_.find((a << 32) | b);
    if (it == ecmp_groups_.end()) return;
    MiddleComponents(links, fabric_, ix_, comps_);
    route_weights_.assign(comps_.size(), 1.0f);
    // A cut-short route crosses each of its k candidates at a position by
    // 1/k: the share of the ECMP group's untraced probes it may fail.
    CandidateComponents(links, paths_.Candidates(m), fabric_, ix_, comps_, &route_weights_);
    p_->AddRoute(it->second, comps_, route_weights_, route_probes_[m]);
  }

  // Each failure group with its RNICs, its path's components and, for a
  // cut-short path, its candidates weighted by their chance of the failure.
  void AddFailureGroups() {
    std::vector<std::uint32_t> middle;
    std::vector<float> weights;
    for (std::size_t i = 0; i < groups_.keys.size(); ++i) {
      const GroupKey g = DecodeGroup(groups_.keys[i]);
      comps_.assign({ix_.RnicComponent(g.host, g.src), ix_.RnicComponent(g.host, g.dst)});
      const bool traced = g.middle != PathTable::kNoPath;
      if (traced) {
        MiddleComponents(paths_.Middle(g.middle), fabric_, ix_, middle);
        comps_.insert(comps_.end(), middle.begin(), middle.end());
        weights.assign(comps_.size(), 1.0f);
        CandidateComponents(paths_.Middle(g.middle), paths_.Candidates(g.middle), fabric_, ix_,
                            comps_, &weights, fails_);
        if (!slow_ && paths_.Churned(g.middle)) DropWhatTheRouteKept(g.middle, middle, weights);
      } else {
        weights.assign(comps_.size(), 1.0f);
      }
      p_->AddGroup(ix_.Pair(g.host, g.src, g.dst), groups_.counts[i], traced, comps_, weights);
    }
  }

  // A lost probe of a 5-tuple whose route just moved (a churned part): what
  // the route kept, the fabric components both its paths cross (`kept`, on
  // entry its known links and their switches; then a switch at an end of
  // every candidate of a position), drop out of the failure; its RNICs and the
  // candidates where the paths differ stay. Routing moves a flow because
  // something on the part it left went down, and the probes lost in the
  // second before it reacted are that part's: a rail switch both paths
  // cross, at weight 1 where the spine it left had a share, was named for
  // them (a dead spine's first window). A fault on the kept part still loses
  // the flow's probes before the move and after the hold, and every unmoved
  // flow's; the flow's successes still count for it.
  void DropWhatTheRouteKept(MiddleId m, std::vector<std::uint32_t> kept,
                            std::vector<float>& weights) {
    const auto candidates = paths_.Candidates(m);
    for (std::uint32_t pos = 0; pos < paths_.Middle(m).size(); ++pos) {
      std::array<SwitchId, 2> common{kUnknown, kUnknown};
      bool first = true;
      for (const PathCandidate& c : candidates) {
        if (c.position != pos) continue;
        if (c.link >= fabric_.links.size()) {
          common = {kUnknown, kUnknown};
          break;
        }
        const auto& ends = fabric_.links[c.link];
        if (first) common = {ends.lower, ends.upper};
        first = false;
        for (SwitchId& sw : common) {
          if (sw != ends.lower && sw != ends.upper) sw = kUnknown;
        }
      }
      for (const SwitchId sw : common) {
        if (sw < ix_.switches) kept.push_back(ix_.SwitchComponent(sw));
      }
    }
    std::size_t out = 2;  // after the two RNICs
    for (std::size_t i = 2; i < comps_.size(); ++i) {
      if (std::find(kept.begin(), kept.end(), comps_[i]) != kept.end()) continue;
      comps_[out] = comps_[i];
      weights[out++] = weights[i];
    }
    comps_.resize(out);
    weights.resize(out);
  }

  const WindowAccumulator& w_;
  const PathTable& paths_;
  const FabricMap& fabric_;
  const ComponentIndex& ix_;
  const FailureGroups& groups_;
  const bool slow_;
  InferenceProblem* p_;

  std::unordered_map<std::uint64_t, std::uint32_t> ecmp_groups_;
  std::vector<double> whole_failed_, whole_good_;
  // This window's failure groups on whole paths (no candidates).
  struct WholeGroup {
    MiddleId middle;
    double count;
  };
  std::vector<WholeGroup> whole_groups_;
  std::vector<double> rate_, shared_;  // per one-way link (EstimateLinkRates)
  double ambient_ = 1e-3;
  const std::function<double(std::uint32_t)> fails_ = [this](std::uint32_t c) {
    return c < rate_.size() ? rate_[c] : CountedWhole(c);
  };
  const std::function<double(std::uint32_t)> passes_ = [this](std::uint32_t c) {
    return 1 - fails_(c);
  };
  std::vector<char> routed_;
  std::vector<std::uint32_t> comps_;
  std::vector<float> route_weights_;
  std::vector<double> route_probes_;  // per fabric path: the window's probes on it
};

}  // namespace

void BuildProblem(const WindowAccumulator& w, const PathTable& paths, const FabricMap& fabric,
                  const ComponentIndex& ix, const FailureGroups& groups, bool slow,
                  InferenceProblem* p) {
  ProblemBuilder(w, paths, fabric, ix, groups, slow, p).Build();
}

}  // namespace hostmesh::analysis
