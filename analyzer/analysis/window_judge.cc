#include "analyzer/analysis/window_judge.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <unordered_set>

#include "analyzer/analysis/component_index.h"
#include "analyzer/analysis/inference_problem_builder.h"

namespace hostmesh::analysis {
namespace {

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

WindowReport WindowJudge::Judge(const WindowAccumulator& w, SheddingBook* shedding) {
  WindowReport out;
  out.start_ns = w.start_ns();
  out.end_ns = w.end_ns();
  out.results = w.results();
  out.slow_threshold_ns = w.slow_threshold_ns();
  NoteHosts(w, &out);
  if (shedding != nullptr)
    out.shedding = shedding->ForWindow(out.start_ns, out.end_ns, out.present_hosts);
  const ComponentIndex ix = IndexOf(w, out.present_hosts);
  JudgeLoss(w, ix, &out);
  JudgeLatency(w, ix, &out);
  FlagProcessing(w, &out);
  CountCoverage(w, ix, &out);
  NameLinkEnds(&out);
  return out;
}

// Hosts: present when they reported anything; absent when known and silent.
// An absent host's probes are simply not there: nothing counts as a drop.
void WindowJudge::NoteHosts(const WindowAccumulator& w, WindowReport* out) {
  const auto& hosts = w.hosts();
  if (known_hosts_.size() < hosts.size()) known_hosts_.resize(hosts.size(), 0);
  for (HostId h = 0; h < known_hosts_.size(); ++h) {
    const bool present = h < hosts.size() && hosts[h].results > 0;
    if (present) {
      out->present_hosts.push_back(h);
      known_hosts_[h] = 1;
    } else if (known_hosts_[h]) {
      out->absent_hosts.push_back(h);
    }
  }
}

ComponentIndex WindowJudge::IndexOf(const WindowAccumulator& w,
                                    const std::vector<HostId>& present_hosts) const {
  ComponentIndex ix;
  ix.links = std::max(fabric_.links.size(), paths_.link_span());
  ix.switches = fabric_.switch_count;
  const auto& hosts = w.hosts();
  for (HostId h : present_hosts) {
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
  return ix;
}

// A switch's parts: the fabric links on it (both ways and each way) and the
// RNICs under it.
std::vector<std::vector<std::uint32_t>> WindowJudge::SwitchParts(const ComponentIndex& ix) const {
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
  return parts;
}

// Timeouts: the sequential inference over the window's failure groups, the
// RNIC verdicts and drop split it informs, the loss ranking and culprits,
// then what flaps and routing changes say about those culprits.
void WindowJudge::JudgeLoss(const WindowAccumulator& w, const ComponentIndex& ix,
                            WindowReport* out) {
  InferenceProblem loss_problem;
  BuildProblem(w, paths_, fabric_, ix, w.timeouts(), false, &loss_problem);
  std::vector<std::uint64_t> keys(ix.components());
  for (std::uint32_t c = 0; c < keys.size(); ++c) keys[c] = ix.StableKey(c);
  // A link's directions are parts of the link both ways.
  std::vector<std::uint32_t> units(ix.components());
  for (std::uint32_t c = 0; c < units.size(); ++c) {
    units[c] = ix.IsLink(c) ? ix.BothWaysComponent(ix.LinkOf(c)) : c;
  }
  SequentialResult sequential =
      InferSequential(loss_problem, keys, SwitchParts(ix), sequential_, evidence_, units);
  const InferenceResult& loss = sequential.inference;
  out->background_loss = sequential.background;
  out->evidence_threshold = sequential.threshold;

  JudgeRnics(w, ix, loss, out);
  SplitDrops(w, ix, out);
  out->loss = Localize(w, ix, w.timeouts(), loss_problem, loss, true);
  NoteFlaps(w, &out->loss);
  flap_history_.Prune(w.start_ns());
  DropChurnShadows(w, out->background_loss, &out->loss);
  const std::vector<char> failing = FailingLinks(out->loss);
  NameWithdrawnLinks(NoteAvoided(failing, w.end_ns(), &out->coverage), failing, w.end_ns(),
                     &out->loss);
}

// Each loss culprit's ports, and its flaps: down episodes of a link that went
// down and came back, flapping or not yet (its first down and back): route
// churn follows each.
void WindowJudge::NoteFlaps(const WindowAccumulator& w, Localization* loss) {
  for (Suspect& s : loss->culprits) {
    if (s.component.kind == Component::Kind::kLink) s.ports = w.flaps().LinkPorts(s.component.link);
    const bool link = s.component.kind == Component::Kind::kLink;
    auto flap =
        link ? w.flaps().JudgeLink(s.component.link, config_.window.count())
             : w.flaps().JudgeRnic(s.component.host, s.component.nic, config_.window.count());
    if (!flap) continue;
    flap = flap_history_.Judge(link ? FlapHistory::LinkKey(s.component.link)
                                    : FlapHistory::RnicKey(s.component.host, s.component.nic),
                               *flap, w.start_ns(), w.end_ns());
    if (flap->flapping || flap->came_back) s.flaps = flap->flaps;
    if (!flap->flapping) continue;
    s.flapping = true;
    s.flap_period_s = flap->period_s;
  }
}

// Slow probes: the ranking for the paper's voting (baseline); our verdicts
// are hotspots against each link's own baseline.
void WindowJudge::JudgeLatency(const WindowAccumulator& w, const ComponentIndex& ix,
                               WindowReport* out) {
  const InferenceParams slow_params{config_.min_failures, config_.background_slow, config_.min_z,
                                    config_.max_culprits};
  InferenceProblem slow_problem;
  BuildProblem(w, paths_, fabric_, ix, w.slow(), true, &slow_problem);
  const InferenceResult slow = Infer(slow_problem, slow_params);
  out->latency = Localize(w, ix, w.slow(), slow_problem, slow, false);
  HotspotParams hot;
  hot.min_excess_ns = static_cast<double>(config_.hotspot_min_excess.count());
  hot.noise_z = config_.hotspot_noise_z;
  out->latency.culprits.clear();
  const auto name = [&](const Hotspot& h) {
    for (Suspect& earlier : out->latency.culprits) {
      if (earlier.component.link != h.link) continue;
      earlier.component.direction = kBothWays;
      return;
    }
    Suspect s;
    s.component.link = h.link;
    s.component.direction = h.up ? kUpward : kDownward;
    s.added_latency_ns = h.added_ns;
    s.good = h.probes;
    s.z = h.excess_ns / hot.min_excess_ns;
    s.raw_confidence = h.consistency;
    s.confidence = config_.confidence.latency.Apply(s.raw_confidence);
    out->latency.culprits.push_back(std::move(s));
  };
  std::vector<Hotspot> warm;
  for (const Hotspot& h : FindHotspots(w.middle_latency(), w.middle_ok(), paths_, ix.links,
                                       latency_baselines_, hot, &warm)) {
    name(h);
  }
  // Hysteresis: a link named last window stays named while it is still slow
  // (half the bar over its baseline). A congested queue's level wanders
  // under the bar without the fault having gone; brief congestion that
  // moves on falls under half of it.
  for (const Hotspot& h : warm) {
    out->coverage.slow.push_back(h.link);
    if (std::binary_search(latency_named_.begin(), latency_named_.end(), h.link)) name(h);
  }
  out->coverage.slow.erase(std::unique(out->coverage.slow.begin(), out->coverage.slow.end()),
                           out->coverage.slow.end());
  latency_named_.clear();
  for (const Suspect& s : out->latency.culprits) latency_named_.push_back(s.component.link);
  std::sort(latency_named_.begin(), latency_named_.end());
  for (LinkRank& r : out->latency.links) {
    r.culprit = std::any_of(out->latency.culprits.begin(), out->latency.culprits.end(),
                            [&](const Suspect& s) { return s.component.link == r.link; });
  }
}

// Each culprit link's ends, as the API and incidents name them.
void WindowJudge::NameLinkEnds(WindowReport* out) const {
  for (Localization* loc : {&out->loss, &out->latency}) {
    for (Suspect& s : loc->culprits) {
      if (s.component.kind != Component::Kind::kLink || s.component.link >= fabric_.links.size()) {
        continue;
      }
      s.lower = fabric_.links[s.component.link].lower;
      s.upper = fabric_.links[s.component.link].upper;
    }
  }
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

void WindowJudge::JudgeRnics(const WindowAccumulator& w, const ComponentIndex& ix,
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

void WindowJudge::SplitDrops(const WindowAccumulator& w, const ComponentIndex& ix,
                             WindowReport* out) const {
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

Localization WindowJudge::Localize(const WindowAccumulator& w, const ComponentIndex& ix,
                                   const FailureGroups& groups, InferenceProblem& problem,
                                   const InferenceResult& result, bool baseline_skips_rnics) const {
  Localization out;
  std::vector<char> culprit(problem.components, 0);
  std::vector<char> link_culprit(ix.links, 0);
  NameCulprits(ix, groups, problem, result, culprit, link_culprit, &out);
  RankLinks(ix, problem, result, link_culprit, &out);
  const std::vector<std::uint64_t> switch_votes =
      RankByVotes(w, ix, groups, problem, result, culprit, baseline_skips_rnics, &out);
  RankSwitches(ix, result, switch_votes, &out);
  return out;
}

// The inference's culprits as suspects, one per link (a link blamed one way
// and then the other reads "both"), with example paths; switches apart.
void WindowJudge::NameCulprits(const ComponentIndex& ix, const FailureGroups& groups,
                               const InferenceProblem& problem, const InferenceResult& result,
                               std::vector<char>& culprit, std::vector<char>& link_culprit,
                               Localization* out) const {
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
        for (Suspect& earlier : out->culprits) {
          if (earlier.component.kind == Component::Kind::kLink && earlier.component.link == l) {
            earlier.component.direction = kBothWays;
          }
        }
        continue;
      }
      link_culprit[s.component.link] = 1;
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
      const GroupKey k = DecodeGroup(groups.keys[gi]);
      s.example_paths.push_back(FullPath(k.host, k.src, k.dst, k.middle));
    }
    out->culprits.push_back(std::move(s));
  }
}

void WindowJudge::RankLinks(const ComponentIndex& ix, const InferenceProblem& problem,
                            const InferenceResult& result, const std::vector<char>& link_culprit,
                            Localization* out) const {
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
    out->links.push_back(r);
  }
  // Culprits first, the most evident (then the lossiest: a gray link whose
  // traces no longer cross it keeps its place) before the rest by score.
  std::vector<std::pair<double, double>> culprit_key(ix.links, {0.0, 0.0});
  for (const Suspect& c : out->culprits) {
    if (c.component.kind != Component::Kind::kLink) continue;
    culprit_key[c.component.link] = std::max(culprit_key[c.component.link], {c.z, c.loss});
  }
  std::sort(out->links.begin(), out->links.end(), [&](const LinkRank& a, const LinkRank& b) {
    if (a.culprit != b.culprit) return a.culprit;
    if (a.culprit && culprit_key[a.link] != culprit_key[b.link]) {
      return culprit_key[a.link] > culprit_key[b.link];
    }
    if (a.score != b.score) return a.score > b.score;
    return a.link < b.link;
  });
}

// The switches' votes (per failed probe of an abnormal path through them) are
// returned for RankSwitches.
std::vector<std::uint64_t> WindowJudge::RankByVotes(
    const WindowAccumulator& w, const ComponentIndex& ix, const FailureGroups& groups,
    const InferenceProblem& problem, const InferenceResult& result,
    const std::vector<char>& culprit, bool baseline_skips_rnics, Localization* out) const {
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
    const GroupKey k = DecodeGroup(groups.keys[gi]);
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
  for (auto& r : out->links) r.votes = votes[r.link];
  for (LinkId l = 0; l < ix.links; ++l) {
    if (votes[l] == 0) continue;
    LinkRank r;
    r.link = l;
    r.votes = votes[l];
    r.failures = result.failures[l];
    r.good = problem.good[l];
    r.culprit = culprit[l];
    out->baseline.push_back(r);
  }
  std::sort(out->baseline.begin(), out->baseline.end(), [](const LinkRank& a, const LinkRank& b) {
    return a.votes != b.votes ? a.votes > b.votes : a.link < b.link;
  });
  return switch_votes;
}

void WindowJudge::RankSwitches(const ComponentIndex& ix, const InferenceResult& result,
                               const std::vector<std::uint64_t>& switch_votes,
                               Localization* out) const {
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
      out->culprit_switches.push_back(s);
    }
    out->switches.push_back(r);
  }
  std::sort(out->switches.begin(), out->switches.end(),
            [](const SwitchRank& a, const SwitchRank& b) {
              if (a.culprit != b.culprit) return a.culprit;
              if (a.culprit_links != b.culprit_links) return a.culprit_links > b.culprit_links;
              return a.votes != b.votes ? a.votes > b.votes : a.id < b.id;
            });
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
  // A host whose agent shed load for CPU pressure says itself what the
  // factor only infers: it is short of CPU. Its p90 above the fleet's by the
  // minimum excess is enough, so shedding (fewer probes, fewer of them
  // delayed) never hides the overload it answers.
  const auto shed_for_cpu = [out](HostId h) {
    return std::any_of(out->shedding.begin(), out->shedding.end(),
                       [h](const SheddingHost& s) { return s.host == h && s.cpu; });
  };
  for (const auto& [h, v] : p90s) {
    if (v - median < excess) continue;
    const bool by_factor = v > config_.proc_factor * median;
    if (by_factor || shed_for_cpu(h)) {
      ProcessingFlag f{h, v, median, w.hosts()[h].processing.count()};
      f.shedding = !by_factor;
      f.raw_confidence = std::min(1.0, v / std::max(median, 1.0) / (2 * config_.proc_factor));
      f.confidence = config_.confidence.processing.Apply(f.raw_confidence);
      out->processing_flags.push_back(f);
    }
  }
}

void WindowJudge::CountCoverage(const WindowAccumulator& w, const ComponentIndex& ix,
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
    if (const GroupKey g = DecodeGroup(key); g.middle != PathTable::kNoPath) mark_middle(g.middle);
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
