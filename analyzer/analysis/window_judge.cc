#include "analyzer/analysis/window_judge.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <unordered_set>

namespace hostmesh::analysis {
namespace {

std::uint64_t RnicKey(HostId host, NicId nic) {
  return std::uint64_t{host} * kMaxNics + nic;
}

struct GroupKey {
  HostId host;
  NicId src;
  NicId dst;
  MiddleId middle;
};
GroupKey Decode(std::uint64_t key) {
  return {static_cast<HostId>(key >> 32), static_cast<NicId>((key >> 27) & 31),
          static_cast<NicId>((key >> 22) & 31),
          static_cast<MiddleId>(key & PathTable::kMaxMiddles)};
}

Quantiles QuantilesOf(const QuantileSketch& s) {
  return {s.count(), s.Quantile(0.5), s.Quantile(0.9), s.Quantile(0.99), s.Quantile(0.999)};
}

void Finish(SlaRow* row) {
  if (row->probes == 0) return;
  row->rnic_drop_rate = static_cast<double>(row->rnic_drops) / static_cast<double>(row->probes);
  row->network_drop_rate =
      static_cast<double>(row->network_drops) / static_cast<double>(row->probes);
}

}  // namespace

struct WindowJudge::Index {
  // Components: each link three times (climbing, coming down, and both ways:
  // a one-way fault is explained best by its direction, a bad cable by the
  // link), then the switches, then the RNICs of the window.
  std::size_t links = 0;
  std::size_t switches = 0;
  FlatMap rnic{256};
  std::vector<std::uint64_t> rnic_keys;
  FlatMap pair{256};

  std::size_t network() const { return 3 * links + switches; }
  std::size_t components() const { return network() + rnic_keys.size(); }
  std::uint32_t LinkComponent(LinkId l, bool up) const {
    return static_cast<std::uint32_t>(2 * l + (up ? 0 : 1));
  }
  std::uint32_t BothWaysComponent(LinkId l) const {
    return static_cast<std::uint32_t>(2 * links + l);
  }
  std::uint32_t SwitchComponent(SwitchId s) const {
    return static_cast<std::uint32_t>(3 * links + s);
  }
  bool IsLink(std::uint32_t c) const { return c < 3 * links; }
  bool IsSwitch(std::uint32_t c) const { return c >= 3 * links && c < network(); }
  bool IsRnic(std::uint32_t c) const { return c >= network(); }
  LinkId LinkOf(std::uint32_t c) const {
    return static_cast<LinkId>(c < 2 * links ? c / 2 : c - 2 * links);
  }
  SwitchId SwitchOf(std::uint32_t c) const { return static_cast<SwitchId>(c - 3 * links); }
  std::uint32_t Rnic(HostId host, NicId nic) {
    auto [v, inserted] =
        rnic.Insert(RnicKey(host, nic), static_cast<std::uint32_t>(rnic_keys.size()));
    if (inserted) rnic_keys.push_back(RnicKey(host, nic));
    return *v;
  }
  std::uint32_t RnicComponent(HostId host, NicId nic) const {
    return static_cast<std::uint32_t>(network()) + *rnic.Find(RnicKey(host, nic));
  }
  std::uint64_t RnicKeyOf(std::uint32_t c) const { return rnic_keys[c - network()]; }
  std::uint32_t Pair(HostId host, NicId src, NicId dst) const {
    return *pair.Find((std::uint64_t{host} << 10) | (src << 5) | dst);
  }
  Component ComponentOf(std::uint32_t c) const {
    Component out;
    if (IsLink(c)) {
      out.link = LinkOf(c);
      out.direction = c >= 2 * links ? kBothWays : c % 2 == 0 ? kUpward : kDownward;
      return out;
    }
    const auto key = RnicKeyOf(c);
    out.kind = Component::Kind::kRnic;
    out.host = static_cast<HostId>(key / kMaxNics);
    out.nic = static_cast<NicId>(key % kMaxNics);
    return out;
  }
  // The same component in every window: the key of its evidence.
  static std::uint64_t DirectedKey(LinkId link, bool up) {
    return (std::uint64_t{1} << 60) | (2 * std::uint64_t{link} + (up ? 0 : 1));
  }
  static std::uint64_t BothWaysKey(LinkId link) { return (std::uint64_t{4} << 60) | link; }
  std::uint64_t StableKey(std::uint32_t c) const {
    if (c < 2 * links) return DirectedKey(static_cast<LinkId>(c / 2), c % 2 == 0);
    if (IsLink(c)) return BothWaysKey(LinkOf(c));
    if (IsSwitch(c)) return (std::uint64_t{2} << 60) | SwitchOf(c);
    return (std::uint64_t{3} << 60) | RnicKeyOf(c);
  }
};

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

// Fills problem with one kind of failure: timeouts (slow=false) or slow probes.
void BuildProblem(const WindowAccumulator& w, const PathTable& paths, const FabricMap& fabric,
                  const auto& ix, const FailureGroups& groups, bool slow, InferenceProblem* p,
                  const auto& rail_of) {
  p->Reset(ix.components());
  // ECMP groups: NIC pairs between the same two rail switches (the first
  // switch of each NIC's link, learned from paths); a NIC whose link is not
  // known yet counts by its rail (one pod's fabrics alike).
  std::unordered_map<std::uint64_t, std::uint32_t> ecmp_groups;
  const auto ecmp_group = [&](HostId h, NicId s, NicId d) {
    const auto first_switch = [&](NicId n) -> std::uint64_t {
      const LinkId l = paths.NicLink(h, n);
      if (l < fabric.links.size() && fabric.links[l].upper != kUnknown) {
        return fabric.links[l].upper;
      }
      return (std::uint64_t{1} << 31) | rail_of(h, n);
    };
    const std::uint64_t key = (first_switch(s) << 32) | first_switch(d);
    return ecmp_groups.emplace(key, static_cast<std::uint32_t>(ecmp_groups.size())).first->second;
  };
  std::fill(p->is_link.begin(), p->is_link.begin() + static_cast<std::ptrdiff_t>(ix.network()),
            true);
  const auto& ok = w.middle_ok();
  std::vector<std::uint32_t> comps;
  // Loss rates from whole paths (no candidates), to share a cut-short path's
  // probes among its candidates: (failures + 1) / (probes + 2), so a link no
  // whole path crossed (a gray link eats its traces) starts at 1/2.
  std::vector<double> whole_failed(p->components, 0), whole_good(p->components, 0);
  for (std::size_t m = 0; m < ok.size(); ++m) {
    const std::uint64_t good = slow ? ok[m] - w.middle_slow()[m] : ok[m];
    if (good == 0) continue;
    MiddleComponents(paths.Middle(static_cast<MiddleId>(m)), fabric, ix, comps);
    const bool whole = paths.Candidates(static_cast<MiddleId>(m)).empty();
    for (const std::uint32_t c : comps) {
      p->good[c] += good;
      if (whole) whole_good[c] += static_cast<double>(good);
    }
  }
  for (std::size_t i = 0; i < groups.keys.size(); ++i) {
    const GroupKey g = Decode(groups.keys[i]);
    if (g.middle == PathTable::kNoPath || !paths.Candidates(g.middle).empty()) continue;
    MiddleComponents(paths.Middle(g.middle), fabric, ix, comps);
    for (const std::uint32_t c : comps) whole_failed[c] += groups.counts[i];
  }
  const std::function<double(std::uint32_t)> fails = [&](std::uint32_t c) {
    return (whole_failed[c] + 1) / (whole_failed[c] + whole_good[c] + 2);
  };
  const std::function<double(std::uint32_t)> passes = [&](std::uint32_t c) { return 1 - fails(c); };
  // A cut-short path's successes: shared among its candidates by the chance
  // each passes a probe (a gray link takes few), as its failures are below.
  {
    std::vector<float> weights;
    std::vector<double> shared(p->components, 0);
    for (std::size_t m = 0; m < ok.size(); ++m) {
      const std::uint64_t good = slow ? ok[m] - w.middle_slow()[m] : ok[m];
      const auto candidates = paths.Candidates(static_cast<MiddleId>(m));
      if (good == 0 || candidates.empty()) continue;
      const auto links = paths.Middle(static_cast<MiddleId>(m));
      MiddleComponents(links, fabric, ix, comps);
      const std::size_t known = comps.size();
      weights.assign(known, 1.0f);
      CandidateComponents(links, candidates, fabric, ix, comps, &weights, passes);
      for (std::size_t i = known; i < comps.size(); ++i) {
        shared[comps[i]] += static_cast<double>(good) * weights[i];
      }
    }
    for (std::size_t c = 0; c < shared.size(); ++c) {
      p->good[c] += static_cast<std::uint64_t>(std::llround(shared[c]));
    }
  }
  p->pairs.resize(ix.pair.size());
  for (LinkId l = 0; l < ix.links && l < fabric.links.size(); ++l) {
    if (fabric.links[l].lower == kUnknown) continue;  // a NIC link
    p->ambient[ix.LinkComponent(l, true)] = true;
    p->ambient[ix.LinkComponent(l, false)] = true;
  }
  const auto& hosts = w.hosts();
  for (HostId h = 0; h < hosts.size(); ++h) {
    const auto& hw = hosts[h];
    for (NicId s = 0; s < hw.nics; ++s) {
      for (NicId d = 0; d < hw.nics; ++d) {
        const PairCounts& c = hw.Pair(s, d);
        if (c.total() == 0) continue;
        const std::uint64_t good =
            slow ? std::uint64_t{c.traced_ok} - c.traced_slow + c.untraced_ok - c.untraced_slow
                 : std::uint64_t{c.traced_ok} + c.untraced_ok;
        const std::uint64_t untraced =
            slow ? std::uint64_t{c.untraced_ok} - c.untraced_slow : std::uint64_t{c.untraced_ok};
        for (NicId n : {s, d}) {
          p->good[ix.RnicComponent(h, n)] += good - untraced;
          p->good_untraced[ix.RnicComponent(h, n)] += untraced;
        }
        auto& t = p->pairs[ix.Pair(h, s, d)];
        t.rail_pair = ecmp_group(h, s, d);
        t.src_rnic = ix.RnicComponent(h, s);
        t.dst_rnic = ix.RnicComponent(h, d);
        t.traced = slow ? c.traced_ok : std::uint64_t{c.traced_ok} + c.traced_timeout;
        t.untraced = slow ? c.untraced_ok : std::uint64_t{c.untraced_ok} + c.untraced_timeout;
      }
    }
  }
  p->rail_pairs = ecmp_groups.size();
  // Routes: every fabric path of the window once, under the ECMP group of its
  // two ends (the lower switch of its first and of its last link).
  const auto end_switch = [&](MiddleId m, std::size_t at) -> std::uint64_t {
    const auto links = paths.Middle(m);
    LinkId l = links[at];
    if (l == kUnknown) {
      for (const PathCandidate& c : paths.Candidates(m)) {
        if (c.position == at) l = c.link;
      }
    }
    return l < fabric.links.size() ? fabric.links[l].lower : kUnknown;
  };
  std::vector<char> routed;
  const auto add_route = [&](MiddleId m) {
    if (m >= routed.size()) routed.resize(std::size_t{m} + 1, 0);
    if (routed[m]) return;
    routed[m] = 1;
    const auto links = paths.Middle(m);
    if (links.empty()) return;
    const std::uint64_t a = end_switch(m, 0), b = end_switch(m, links.size() - 1);
    if (a == kUnknown || b == kUnknown) return;
    const auto it = ecmp_groups.find((a << 32) | b);
    if (it == ecmp_groups.end()) return;
    MiddleComponents(links, fabric, ix, comps);
    CandidateComponents(links, paths.Candidates(m), fabric, ix, comps);
    p->AddRoute(it->second, comps);
  };
  for (std::size_t m = 0; m < ok.size(); ++m) {
    if (ok[m] > 0) add_route(static_cast<MiddleId>(m));
  }
  for (const std::uint64_t key : groups.keys) {
    const MiddleId m = Decode(key).middle;
    if (m != PathTable::kNoPath) add_route(m);
  }
  std::vector<std::uint32_t> middle;
  std::vector<float> weights;
  for (std::size_t i = 0; i < groups.keys.size(); ++i) {
    const GroupKey g = Decode(groups.keys[i]);
    comps.assign({ix.RnicComponent(g.host, g.src), ix.RnicComponent(g.host, g.dst)});
    const bool traced = g.middle != PathTable::kNoPath;
    if (traced) {
      MiddleComponents(paths.Middle(g.middle), fabric, ix, middle);
      comps.insert(comps.end(), middle.begin(), middle.end());
      weights.assign(comps.size(), 1.0f);
      CandidateComponents(paths.Middle(g.middle), paths.Candidates(g.middle), fabric, ix, comps,
                          &weights, fails);
    } else {
      weights.assign(comps.size(), 1.0f);
    }
    p->AddGroup(ix.Pair(g.host, g.src, g.dst), groups.counts[i], traced, comps, weights);
  }
}

}  // namespace

SequentialParams SequentialParamsFrom(const AnalysisConfig& config) {
  SequentialParams p;
  p.min_loss = config.min_loss;
  p.prior_background = config.prior_background_loss;
  p.false_alarms_per_window = config.false_alarms_per_window;
  p.window_alpha = config.window_alpha;
  p.min_failures = config.min_failures;
  p.max_culprits = config.max_culprits;
  return p;
}

std::vector<LinkId> WindowJudge::FullPath(HostId host, NicId src, NicId dst,
                                          MiddleId middle) const {
  std::vector<LinkId> path{paths_.NicLink(host, src)};
  const auto m = paths_.Middle(middle);
  path.insert(path.end(), m.begin(), m.end());
  path.push_back(paths_.NicLink(host, dst));
  return path;
}

WindowReport WindowJudge::Judge(const WindowAccumulator& w) {
  WindowReport out;
  out.start_ns = w.start_ns();
  out.end_ns = w.end_ns();
  out.results = w.results();
  out.slow_threshold_ns = w.slow_threshold_ns();

  // Hosts: present when they reported anything; absent when known and silent.
  // An absent host's probes are simply not there: nothing counts as a drop.
  const auto& hosts = w.hosts();
  if (known_hosts_.size() < hosts.size()) known_hosts_.resize(hosts.size(), 0);
  for (HostId h = 0; h < known_hosts_.size(); ++h) {
    const bool present = h < hosts.size() && hosts[h].results > 0;
    if (present) {
      out.present_hosts.push_back(h);
      known_hosts_[h] = 1;
    } else if (known_hosts_[h]) {
      out.absent_hosts.push_back(h);
    }
  }

  Index ix;
  ix.links = std::max(fabric_.links.size(), paths_.link_span());
  ix.switches = fabric_.switch_count;
  for (HostId h : out.present_hosts) {
    const auto& hw = hosts[h];
    for (NicId s = 0; s < hw.nics; ++s) {
      for (NicId d = 0; d < hw.nics; ++d) {
        if (hw.Pair(s, d).total() == 0) continue;
        ix.Rnic(h, s);
        ix.Rnic(h, d);
        ix.pair.Insert((std::uint64_t{h} << 10) | (s << 5) | d,
                       static_cast<std::uint32_t>(ix.pair.size()));
      }
    }
  }

  const auto rail_of = [this](HostId h, NicId n) {
    return static_cast<std::uint32_t>(std::clamp(RailOf(h, n), 0, static_cast<int>(kMaxNics) - 1));
  };
  InferenceProblem loss_problem;
  BuildProblem(w, paths_, fabric_, ix, w.timeouts(), false, &loss_problem, rail_of);
  std::vector<std::uint64_t> keys(ix.components());
  for (std::uint32_t c = 0; c < keys.size(); ++c) keys[c] = ix.StableKey(c);
  // A switch's parts: the fabric links on it (both ways and each way) and the
  // RNICs under it.
  std::vector<std::vector<std::uint32_t>> parts(ix.components());
  for (const std::uint64_t key : ix.rnic_keys) {
    const HostId h = static_cast<HostId>(key / kMaxNics);
    const NicId n = static_cast<NicId>(key % kMaxNics);
    const LinkId l = paths_.NicLink(h, n);
    if (l >= fabric_.links.size() || fabric_.links[l].upper >= ix.switches) continue;
    parts[ix.SwitchComponent(fabric_.links[l].upper)].push_back(ix.RnicComponent(h, n));
  }
  for (LinkId l = 0; l < fabric_.links.size() && l < ix.links; ++l) {
    const auto& ends = fabric_.links[l];
    if (ends.lower == kUnknown || ends.upper == kUnknown) continue;  // a NIC link
    for (const SwitchId s : {ends.lower, ends.upper}) {
      if (s >= ix.switches) continue;
      auto& of = parts[ix.SwitchComponent(s)];
      of.insert(of.end(),
                {ix.BothWaysComponent(l), ix.LinkComponent(l, true), ix.LinkComponent(l, false)});
    }
  }
  SequentialResult sequential = InferSequential(loss_problem, keys, parts, sequential_, evidence_);
  const InferenceResult& loss = sequential.inference;
  out.background_loss = sequential.background;
  out.evidence_threshold = sequential.threshold;

  JudgeRnics(w, ix, loss, &out);
  SplitDrops(w, ix, &out);
  out.loss = Localize(w, ix, w.timeouts(), loss_problem, loss, true);
  for (Suspect& s : out.loss.culprits) {
    if (s.component.kind == Component::Kind::kLink) s.ports = w.flaps().LinkPorts(s.component.link);
    const bool link = s.component.kind == Component::Kind::kLink;
    auto flap =
        link ? w.flaps().JudgeLink(s.component.link, config_.window.count())
             : w.flaps().JudgeRnic(s.component.host, s.component.nic, config_.window.count());
    if (!flap) continue;
    flap = flap_history_.Judge(link ? FlapHistory::LinkKey(s.component.link)
                                    : FlapHistory::RnicKey(s.component.host, s.component.nic),
                               *flap, w.start_ns(), w.end_ns());
    // Down episodes of a link that went down and came back, flapping or not
    // yet (its first down and back): route churn follows each.
    if (flap->flapping || flap->came_back) s.flaps = flap->flaps;
    if (!flap->flapping) continue;
    s.flapping = true;
    s.flap_period_s = flap->period_s;
  }
  flap_history_.Prune(w.start_ns());
  DropChurnShadows(w, &out.loss);
  NoteAvoided(&out.coverage);
  NameWithdrawnLinks(out.coverage.avoided_switches, &out.loss);

  const InferenceParams slow_params{config_.min_failures, config_.background_slow, config_.min_z,
                                    config_.max_culprits};
  InferenceProblem slow_problem;
  BuildProblem(w, paths_, fabric_, ix, w.slow(), true, &slow_problem, rail_of);
  const InferenceResult slow = Infer(slow_problem, slow_params);
  out.latency = Localize(w, ix, w.slow(), slow_problem, slow, false);
  // Our latency verdict: hotspots against each link's own baseline; the
  // slow-probe ranking above stays for the paper's voting (baseline).
  HotspotParams hot;
  hot.min_excess_ns = static_cast<double>(config_.hotspot_min_excess.count());
  hot.noise_z = config_.hotspot_noise_z;
  out.latency.culprits.clear();
  for (const Hotspot& h :
       FindHotspots(w.middle_latency(), paths_, ix.links, latency_baselines_, hot)) {
    Suspect s;
    s.component.link = h.link;
    s.component.direction = h.up ? kUpward : kDownward;
    s.added_latency_ns = h.excess_ns;
    s.good = h.probes;
    s.z = h.excess_ns / hot.min_excess_ns;
    s.raw_confidence = h.consistency;
    s.confidence = config_.confidence.latency.Apply(s.raw_confidence);
    bool merged = false;
    for (Suspect& earlier : out.latency.culprits) {
      if (earlier.component.link == h.link) {
        earlier.component.direction = kBothWays;
        merged = true;
      }
    }
    if (!merged) out.latency.culprits.push_back(std::move(s));
  }
  for (LinkRank& r : out.latency.links) {
    r.culprit = std::any_of(out.latency.culprits.begin(), out.latency.culprits.end(),
                            [&](const Suspect& s) { return s.component.link == r.link; });
  }

  FlagProcessing(w, &out);
  CountCoverage(w, ix, &out);
  for (Localization* loc : {&out.loss, &out.latency}) {
    for (Suspect& s : loc->culprits) {
      if (s.component.kind != Component::Kind::kLink || s.component.link >= fabric_.links.size()) {
        continue;
      }
      s.lower = fabric_.links[s.component.link].lower;
      s.upper = fabric_.links[s.component.link].upper;
    }
  }
  return out;
}

bool WindowJudge::ShareASwitch(LinkId a, LinkId b) const {
  if (a >= fabric_.links.size() || b >= fabric_.links.size()) return false;
  const auto& x = fabric_.links[a];
  const auto& y = fabric_.links[b];
  for (const SwitchId s : {x.lower, x.upper}) {
    if (s != kUnknown && (s == y.lower || s == y.upper)) return true;
  }
  return false;
}

// A withdrawn link is down whatever its probes say: they no longer cross it
// (those that seem to are on paths traced before routing moved them). A
// switch with two or more up-links into it withdrawn (one could be a cable)
// and the rest avoided is down itself, or cut off: one fault, named as the
// switch, its links not named beside it. Each is a culprit of the ranking
// too, so the link and switch views say what the incidents say.
WindowJudge::UnusedSwitches WindowJudge::SwitchesOf(
    const std::vector<WithdrawnLink>& unused) const {
  const std::size_t switches = fabric_.switch_count;
  const std::vector<char> watched = routes_.Watched(fabric_);
  std::vector<std::uint32_t> watched_into(switches, 0);
  UnusedSwitches out{std::vector<char>(switches, 0), std::vector<std::uint32_t>(switches, 0),
                     std::vector<double>(switches, 0)};
  for (LinkId l = 0; l < watched.size(); ++l) {
    if (watched[l] && fabric_.links[l].upper < switches) ++watched_into[fabric_.links[l].upper];
  }
  for (const WithdrawnLink& g : unused) {
    const SwitchId up = fabric_.links[g.link].upper;
    if (up >= switches) continue;
    ++out.count[up];
    out.worst_p[up] = std::max(out.worst_p[up], g.p_value);
  }
  for (SwitchId s = 0; s < switches; ++s) {
    out.all[s] = out.count[s] >= 2 && out.count[s] == watched_into[s];
  }
  return out;
}

void WindowJudge::NoteAvoided(Coverage* coverage) const {
  const std::vector<WithdrawnLink> avoided = routes_.Unused(fabric_, config_.route_avoided_alpha);
  for (const WithdrawnLink& a : avoided) coverage->avoided.push_back(a.link);
  std::sort(coverage->avoided.begin(), coverage->avoided.end());
  const UnusedSwitches switches = SwitchesOf(avoided);
  for (SwitchId s = 0; s < switches.all.size(); ++s) {
    if (switches.all[s]) coverage->avoided_switches.push_back(s);
  }
}

void WindowJudge::NameWithdrawnLinks(const std::vector<SwitchId>& avoided_switches,
                                     Localization* loss) const {
  const std::vector<WithdrawnLink> gone = routes_.Withdrawn(fabric_);
  if (gone.empty()) return;
  const std::size_t switches = fabric_.switch_count;
  // Two or more withdrawn, the rest at least avoided: links are withdrawn one
  // by one as their switches' draws come in, the switch is down meanwhile.
  const UnusedSwitches withdrawn = SwitchesOf(gone);
  std::vector<char> down(switches, 0);
  for (SwitchId s = 0; s < switches; ++s) {
    down[s] = withdrawn.count[s] >= 2 &&
              std::binary_search(avoided_switches.begin(), avoided_switches.end(), s);
    if (down[s]) NameDownSwitch(s, withdrawn.worst_p[s], loss);
  }
  const auto on_down_switch = [&](LinkId l) {
    if (l >= fabric_.links.size()) return false;
    const auto& ends = fabric_.links[l];
    return (ends.lower < switches && down[ends.lower]) ||
           (ends.upper < switches && down[ends.upper]);
  };
  std::erase_if(loss->culprits, [&](const Suspect& s) {
    return s.component.kind == Component::Kind::kLink && on_down_switch(s.component.link);
  });
  for (LinkRank& r : loss->links) {
    if (on_down_switch(r.link)) r.culprit = false;
  }
  for (const WithdrawnLink& g : gone) {
    if (on_down_switch(g.link)) continue;
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
void WindowJudge::DropChurnShadows(const WindowAccumulator& w, Localization* loss) {
  std::vector<Suspect>& culprits = loss->culprits;
  const FlapRecorder& flaps = w.flaps();
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
      if (!overlap || overlap->inside < config_.churn_inside * overlap->failures) continue;
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
    for (const std::uint64_t key : {Index::DirectedKey(link, true), Index::DirectedKey(link, false),
                                    Index::BothWaysKey(link)}) {
      if (EvidenceBook::Entry* e = evidence_.FindMutable(key)) *e = EvidenceBook::Entry{};
    }
  }
  culprits.resize(kept);
}

void WindowJudge::JudgeRnics(const WindowAccumulator& w, const Index& ix,
                             const InferenceResult& loss, WindowReport* out) {
  std::unordered_map<std::uint64_t, const Culprit*> blamed;
  for (const auto& c : loss.culprits) {
    if (ix.IsRnic(c.component)) {
      blamed.emplace(ix.RnicKeyOf(c.component), &c);
    }
  }
  const auto sticky = config_.rnic_sticky.count();
  for (std::uint64_t key : ix.rnic_keys) {
    RnicStatus st;
    st.host = static_cast<HostId>(key / kMaxNics);
    st.nic = static_cast<NicId>(key % kMaxNics);
    const auto& hw = w.hosts()[st.host];
    for (NicId other = 0; other < hw.nics; ++other) {
      const PairCounts& to = hw.Pair(other, st.nic);
      const PairCounts& from = hw.Pair(st.nic, other);
      st.probes_to += to.total();
      st.timeouts_to += to.timeouts();
      st.probes += to.total() + from.total();
      st.timeouts += to.timeouts() + from.timeouts();
    }
    if (st.nic < hw.send_failures.size()) st.send_failures = hw.send_failures[st.nic];
    const bool lost_to =
        st.probes_to > 0 && static_cast<double>(st.timeouts_to) >
                                config_.rnic_anomalous_ratio * static_cast<double>(st.probes_to);
    if (lost_to) paper_until_[key] = w.end_ns() + sticky;
    const auto p = paper_until_.find(key);
    st.paper_anomalous = p != paper_until_.end() && p->second > w.start_ns();

    if (const auto b = blamed.find(key); b != blamed.end()) {
      st.loss = b->second->loss;
      if (st.loss > config_.rnic_anomalous_ratio) {
        verdict_until_[key] = w.end_ns() + sticky;
        st.state = st.loss >= config_.rnic_down_ratio ? RnicState::kDown : RnicState::kLossy;
      } else {
        st.state = RnicState::kLossy;  // lossy, but below the paper's bar: network drops
      }
    }
    // Its own probes never left it while those to it were lost: the RNIC is
    // down, not lossy, even while the inference's estimate builds up (or
    // another culprit took its failures). Send failures stay out of loss.
    if (lost_to && CannotSend(st, config_.rnic_down_send_failure_share)) {
      verdict_until_[key] = w.end_ns() + sticky;
      st.state = RnicState::kDown;
    }
    const auto v = verdict_until_.find(key);
    if (v != verdict_until_.end() && v->second > w.start_ns()) {
      st.anomalous = true;
      st.anomalous_until_ns = v->second;
    }
    out->rnics.push_back(st);
  }
}

void WindowJudge::SplitDrops(const WindowAccumulator& w, const Index& ix, WindowReport* out) const {
  (void)ix;
  std::unordered_set<std::uint64_t> anomalous;
  for (const auto& r : out->rnics) {
    if (r.anomalous) anomalous.insert(RnicKey(r.host, r.nic));
  }
  const auto& hosts = w.hosts();
  std::vector<SlaRow> rails(w.rail_latency().size());
  for (HostId h : out->present_hosts) {
    const auto& hw = hosts[h];
    HostSla row{h, {}};
    for (NicId s = 0; s < hw.nics; ++s) {
      for (NicId d = 0; d < hw.nics; ++d) {
        const PairCounts& c = hw.Pair(s, d);
        if (c.total() == 0) continue;
        const bool rnic = anomalous.count(RnicKey(h, s)) || anomalous.count(RnicKey(h, d));
        const auto rail = static_cast<std::size_t>(RailOf(h, s));
        if (rail >= rails.size()) rails.resize(rail + 1);
        for (SlaRow* r : {&row.sla, &rails[rail], &out->sla.cluster}) {
          r->probes += c.total();
          r->timeouts += c.timeouts();
          (rnic ? r->rnic_drops : r->network_drops) += c.timeouts();
        }
      }
    }
    row.sla.latency = QuantilesOf(hw.latency);
    row.sla.processing = QuantilesOf(hw.processing);
    Finish(&row.sla);
    out->sla.hosts.push_back(row);
  }
  QuantileSketch cluster_latency, cluster_processing;
  for (std::size_t r = 0; r < rails.size(); ++r) {
    if (r < w.rail_latency().size()) {
      rails[r].latency = QuantilesOf(w.rail_latency()[r]);
      rails[r].processing = QuantilesOf(w.rail_processing()[r]);
      cluster_latency.Merge(w.rail_latency()[r]);
      cluster_processing.Merge(w.rail_processing()[r]);
    }
    if (rails[r].probes == 0) continue;
    Finish(&rails[r]);
    out->sla.rails.push_back({static_cast<int>(r), rails[r]});
  }
  out->sla.cluster.latency = QuantilesOf(cluster_latency);
  out->sla.cluster.processing = QuantilesOf(cluster_processing);
  Finish(&out->sla.cluster);
}

Localization WindowJudge::Localize(const WindowAccumulator& w, const Index& ix,
                                   const FailureGroups& groups, InferenceProblem& problem,
                                   const InferenceResult& result, bool baseline_skips_rnics) const {
  (void)w;
  Localization out;
  std::vector<char> culprit(problem.components, 0);
  std::vector<char> link_culprit(ix.links, 0);
  std::vector<std::size_t> link_order(ix.links, result.culprits.size());
  for (std::size_t i = 0; i < result.culprits.size(); ++i) {
    const Culprit& c = result.culprits[i];
    culprit[c.component] = 1;
    if (ix.IsSwitch(c.component)) continue;  // reported with the switches below
    Suspect s;
    s.component = ix.ComponentOf(c.component);
    if (ix.IsLink(c.component)) {
      // One suspect per link: a link blamed one way and then the other reads "both".
      const LinkId l = s.component.link;
      if (link_culprit[l]) {
        for (Suspect& earlier : out.culprits) {
          if (earlier.component.kind == Component::Kind::kLink && earlier.component.link == l) {
            earlier.component.direction = kBothWays;
          }
        }
        continue;
      }
      link_culprit[s.component.link] = 1;
      link_order[s.component.link] = std::min(link_order[s.component.link], i);
    }
    s.explained = c.explained;
    s.failures = c.failures;
    s.good = c.good;
    s.loss = c.loss;
    s.z = c.z;
    s.raw_confidence = c.confidence;
    s.confidence = config_.confidence.loss.Apply(c.confidence);
    for (std::size_t gi = 0; gi < problem.groups.size(); ++gi) {
      if (s.example_paths.size() >= config_.max_example_paths) break;
      const auto& g = problem.groups[gi];
      const auto* b = problem.comps.data() + g.first;
      if (!g.traced || std::find(b, b + g.size, c.component) == b + g.size) continue;
      const GroupKey k = Decode(groups.keys[gi]);
      s.example_paths.push_back(FullPath(k.host, k.src, k.dst, k.middle));
    }
    out.culprits.push_back(std::move(s));
  }

  // Better method's ranking, per link (both ways): culprits in the order
  // chosen, then by residual score.
  for (std::uint32_t l = 0; l < ix.links; ++l) {
    const std::uint32_t up = ix.LinkComponent(l, true), down = ix.LinkComponent(l, false);
    const std::uint32_t both = ix.BothWaysComponent(l);
    const std::uint64_t failures = result.failures[both];
    if (failures == 0 && !link_culprit[l]) continue;
    LinkRank r;
    r.link = l;
    r.failures = failures;
    r.good = problem.good[both];
    r.loss = static_cast<double>(r.failures) /
             static_cast<double>(std::max<std::uint64_t>(1, r.failures + r.good));
    r.score = std::max({result.score[up], result.score[down], result.score[both]});
    r.culprit = link_culprit[l];
    out.links.push_back(r);
  }
  // Culprits first, the most evident (then the lossiest: a gray link whose
  // traces no longer cross it keeps its place) before the rest by score.
  std::vector<std::pair<double, double>> culprit_key(ix.links, {0.0, 0.0});
  for (const Suspect& c : out.culprits) {
    if (c.component.kind != Component::Kind::kLink) continue;
    culprit_key[c.component.link] = std::max(culprit_key[c.component.link], {c.z, c.loss});
  }
  std::sort(out.links.begin(), out.links.end(), [&](const LinkRank& a, const LinkRank& b) {
    if (a.culprit != b.culprit) return a.culprit;
    if (a.culprit && culprit_key[a.link] != culprit_key[b.link]) {
      return culprit_key[a.link] > culprit_key[b.link];
    }
    if (a.score != b.score) return a.score > b.score;
    return a.link < b.link;
  });

  // Paper Algorithm 1: every link (and switch) of every abnormal traced path
  // gets one vote per failed probe; timeouts of anomalous RNICs are not abnormal paths.
  std::vector<std::uint64_t> votes(ix.links, 0);
  std::vector<std::uint64_t> switch_votes(fabric_.switch_count, 0);
  std::unordered_set<std::uint64_t> paper_rnics;
  for (const auto& [key, until] : paper_until_) {
    if (until > w.start_ns()) paper_rnics.insert(key);
  }
  std::vector<SwitchId> path_switches;
  for (std::size_t gi = 0; gi < groups.keys.size(); ++gi) {
    const GroupKey k = Decode(groups.keys[gi]);
    if (k.middle == PathTable::kNoPath) continue;
    if (baseline_skips_rnics &&
        (paper_rnics.count(RnicKey(k.host, k.src)) || paper_rnics.count(RnicKey(k.host, k.dst)))) {
      continue;
    }
    path_switches.clear();
    for (LinkId l : FullPath(k.host, k.src, k.dst, k.middle)) {
      if (l == kUnknown || l >= ix.links) continue;
      votes[l] += groups.counts[gi];
      if (l < fabric_.links.size()) {
        for (SwitchId s : {fabric_.links[l].lower, fabric_.links[l].upper}) {
          if (s < switch_votes.size() &&
              std::find(path_switches.begin(), path_switches.end(), s) == path_switches.end()) {
            path_switches.push_back(s);
          }
        }
      }
    }
    for (SwitchId s : path_switches) switch_votes[s] += groups.counts[gi];
  }
  for (auto& r : out.links) r.votes = votes[r.link];
  for (LinkId l = 0; l < ix.links; ++l) {
    if (votes[l] == 0) continue;
    LinkRank r;
    r.link = l;
    r.votes = votes[l];
    r.failures = result.failures[l];
    r.good = problem.good[l];
    r.culprit = culprit[l];
    out.baseline.push_back(r);
  }
  std::sort(out.baseline.begin(), out.baseline.end(), [](const LinkRank& a, const LinkRank& b) {
    return a.votes != b.votes ? a.votes > b.votes : a.link < b.link;
  });

  // Switches: blamed when the inference found the switch itself a better
  // explanation than any of its links (sequential_inference.h).
  std::vector<std::uint32_t> culprit_links(fabric_.switch_count, 0);
  for (const auto& c : result.culprits) {
    if (!ix.IsLink(c.component) || ix.LinkOf(c.component) >= fabric_.links.size()) continue;
    const LinkId l = ix.LinkOf(c.component);
    for (SwitchId s : {fabric_.links[l].lower, fabric_.links[l].upper}) {
      if (s < culprit_links.size()) ++culprit_links[s];
    }
  }
  std::vector<const Culprit*> switch_culprit(fabric_.switch_count, nullptr);
  for (const auto& c : result.culprits) {
    if (ix.IsSwitch(c.component)) switch_culprit[ix.SwitchOf(c.component)] = &c;
  }
  for (SwitchId s = 0; s < fabric_.switch_count; ++s) {
    if (switch_votes[s] == 0 && culprit_links[s] == 0 && !switch_culprit[s]) continue;
    SwitchRank r{s, switch_votes[s], culprit_links[s]};
    if (const Culprit* c = switch_culprit[s]) {
      r.culprit = true;
      r.loss = c->loss;
      r.evidence = c->z;
      r.raw_confidence = c->confidence;
      r.confidence = config_.confidence.loss.Apply(c->confidence);
      out.culprit_switches.push_back(s);
    }
    out.switches.push_back(r);
  }
  std::sort(out.switches.begin(), out.switches.end(), [](const SwitchRank& a, const SwitchRank& b) {
    if (a.culprit != b.culprit) return a.culprit;
    if (a.culprit_links != b.culprit_links) return a.culprit_links > b.culprit_links;
    return a.votes != b.votes ? a.votes > b.votes : a.id < b.id;
  });
  return out;
}

void WindowJudge::FlagProcessing(const WindowAccumulator& w, WindowReport* out) const {
  // Against the fleet's own median, not a fixed bar: processing delay differs by
  // host type and kernel, but one overloaded host stands out from its peers.
  std::vector<std::pair<HostId, double>> p90s;
  for (HostId h : out->present_hosts) {
    const auto& s = w.hosts()[h].processing;
    if (s.count() >= config_.proc_min_samples) p90s.emplace_back(h, s.Quantile(0.9));
  }
  if (p90s.size() < 3) return;  // no meaningful peer group
  std::vector<double> values;
  for (const auto& [h, v] : p90s) values.push_back(v);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2),
                   values.end());
  const double median = values[values.size() / 2];
  const auto excess = static_cast<double>(config_.proc_min_excess.count());
  for (const auto& [h, v] : p90s) {
    if (v > config_.proc_factor * median && v - median >= excess) {
      ProcessingFlag f{h, v, median, w.hosts()[h].processing.count()};
      f.raw_confidence = std::min(1.0, v / std::max(median, 1.0) / (2 * config_.proc_factor));
      f.confidence = config_.confidence.processing.Apply(f.raw_confidence);
      out->processing_flags.push_back(f);
    }
  }
}

void WindowJudge::CountCoverage(const WindowAccumulator& w, const Index& ix,
                                WindowReport* out) const {
  std::vector<char> crossed(ix.links, 0);
  auto mark_middle = [&](MiddleId m) {
    for (LinkId l : paths_.Middle(m)) {
      if (l < ix.links) crossed[l] = 1;
    }
  };
  for (std::size_t m = 0; m < w.middle_ok().size(); ++m) {
    if (w.middle_ok()[m] > 0) mark_middle(static_cast<MiddleId>(m));
  }
  for (std::uint64_t key : w.timeouts().keys) {
    if (const GroupKey g = Decode(key); g.middle != PathTable::kNoPath) mark_middle(g.middle);
  }
  for (HostId h : out->present_hosts) {
    const auto& hw = w.hosts()[h];
    for (NicId s = 0; s < hw.nics; ++s) {
      for (NicId d = 0; d < hw.nics; ++d) {
        const PairCounts& c = hw.Pair(s, d);
        const std::uint64_t traced = std::uint64_t{c.traced_ok} + c.traced_timeout;
        out->coverage.traced_probes += traced;
        out->coverage.untraced_probes += std::uint64_t{c.untraced_ok} + c.untraced_timeout;
        if (traced == 0) continue;
        for (LinkId l : {paths_.NicLink(h, s), paths_.NicLink(h, d)}) {
          if (l < ix.links) crossed[l] = 1;
        }
      }
    }
  }
  const std::size_t all = fabric_.links.empty() ? ix.links : fabric_.links.size();
  for (LinkId l = 0; l < all; ++l) {
    (l < crossed.size() && crossed[l] ? out->coverage.crossed : out->coverage.never_crossed)
        .push_back(l);
  }
  if (all > 0) {
    out->coverage.fraction =
        static_cast<double>(out->coverage.crossed.size()) / static_cast<double>(all);
  }
}

}  // namespace hostmesh::analysis
