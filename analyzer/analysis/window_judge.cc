#include "analyzer/analysis/window_judge.h"

#include <algorithm>
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
  std::size_t links = 0;
  FlatMap rnic{256};
  std::vector<std::uint64_t> rnic_keys;
  FlatMap pair{256};

  std::uint32_t Rnic(HostId host, NicId nic) {
    auto [v, inserted] =
        rnic.Insert(RnicKey(host, nic), static_cast<std::uint32_t>(rnic_keys.size()));
    if (inserted) rnic_keys.push_back(RnicKey(host, nic));
    return *v;
  }
  std::uint32_t RnicComponent(HostId host, NicId nic) const {
    return static_cast<std::uint32_t>(links) + *rnic.Find(RnicKey(host, nic));
  }
  std::uint32_t Pair(HostId host, NicId src, NicId dst) const {
    return *pair.Find((std::uint64_t{host} << 10) | (src << 5) | dst);
  }
  Component ComponentOf(std::uint32_t c) const {
    Component out;
    if (c < links) {
      out.link = c;
      return out;
    }
    const auto key = rnic_keys[c - links];
    out.kind = Component::Kind::kRnic;
    out.host = static_cast<HostId>(key / kMaxNics);
    out.nic = static_cast<NicId>(key % kMaxNics);
    return out;
  }
};

namespace {

// Fills problem with one kind of failure: timeouts (slow=false) or slow probes.
void BuildProblem(const WindowAccumulator& w, const PathTable& paths, const auto& ix,
                  const FailureGroups& groups, bool slow, InferenceProblem* p) {
  p->Reset(ix.links + ix.rnic_keys.size());
  std::fill(p->is_link.begin(), p->is_link.begin() + static_cast<std::ptrdiff_t>(ix.links), true);
  const auto& ok = w.middle_ok();
  for (std::size_t m = 0; m < ok.size(); ++m) {
    const std::uint64_t good = slow ? ok[m] - w.middle_slow()[m] : ok[m];
    if (good == 0) continue;
    for (LinkId l : paths.Middle(static_cast<MiddleId>(m))) {
      if (l != kUnknown && l < ix.links) p->good[l] += good;
    }
  }
  p->pairs.resize(ix.pair.size());
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
        t.traced = slow ? c.traced_ok : std::uint64_t{c.traced_ok} + c.traced_timeout;
        t.untraced = slow ? c.untraced_ok : std::uint64_t{c.untraced_ok} + c.untraced_timeout;
      }
    }
  }
  std::vector<std::uint32_t> comps;
  for (std::size_t i = 0; i < groups.keys.size(); ++i) {
    const GroupKey g = Decode(groups.keys[i]);
    comps.assign({ix.RnicComponent(g.host, g.src), ix.RnicComponent(g.host, g.dst)});
    const bool traced = g.middle != PathTable::kNoPath;
    if (traced) {
      for (LinkId l : paths.Middle(g.middle)) {
        if (l != kUnknown && l < ix.links) comps.push_back(l);
      }
    }
    p->AddGroup(ix.Pair(g.host, g.src, g.dst), groups.counts[i], traced, comps);
  }
}

}  // namespace

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

  const InferenceParams loss_params{config_.min_failures, config_.background_loss, config_.min_z,
                                    config_.max_culprits};
  InferenceProblem loss_problem;
  BuildProblem(w, paths_, ix, w.timeouts(), false, &loss_problem);
  const InferenceResult loss = Infer(loss_problem, loss_params);

  JudgeRnics(w, ix, loss, &out);
  SplitDrops(w, ix, &out);
  out.loss = Localize(w, ix, w.timeouts(), loss_problem, loss, true);

  InferenceParams slow_params = loss_params;
  slow_params.background = config_.background_slow;
  InferenceProblem slow_problem;
  BuildProblem(w, paths_, ix, w.slow(), true, &slow_problem);
  const InferenceResult slow = Infer(slow_problem, slow_params);
  out.latency = Localize(w, ix, w.slow(), slow_problem, slow, false);

  FlagProcessing(w, &out);
  CountCoverage(w, ix, &out);
  return out;
}

void WindowJudge::JudgeRnics(const WindowAccumulator& w, const Index& ix,
                             const InferenceResult& loss, WindowReport* out) {
  std::unordered_map<std::uint64_t, const Culprit*> blamed;
  for (const auto& c : loss.culprits) {
    if (c.component >= ix.links) blamed.emplace(ix.rnic_keys[c.component - ix.links], &c);
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
    if (st.probes_to > 0 && static_cast<double>(st.timeouts_to) >
                                config_.rnic_anomalous_ratio * static_cast<double>(st.probes_to)) {
      paper_until_[key] = w.end_ns() + sticky;
    }
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
  for (const auto& c : result.culprits) {
    culprit[c.component] = 1;
    Suspect s;
    s.component = ix.ComponentOf(c.component);
    s.explained = c.explained;
    s.failures = c.failures;
    s.good = c.good;
    s.loss = c.loss;
    s.z = c.z;
    s.confidence = c.confidence;
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

  // Better method's ranking: culprits in the order chosen, then by residual score.
  for (std::uint32_t l = 0; l < ix.links; ++l) {
    if (result.failures[l] == 0 && !culprit[l]) continue;
    LinkRank r;
    r.link = l;
    r.failures = result.failures[l];
    r.good = problem.good[l];
    r.loss = static_cast<double>(r.failures) / static_cast<double>(r.failures + r.good);
    r.score = result.score[l];
    r.culprit = culprit[l];
    out.links.push_back(r);
  }
  std::vector<std::size_t> order(problem.components, result.culprits.size());
  for (std::size_t i = 0; i < result.culprits.size(); ++i) order[result.culprits[i].component] = i;
  std::sort(out.links.begin(), out.links.end(), [&](const LinkRank& a, const LinkRank& b) {
    if (order[a.link] != order[b.link]) return order[a.link] < order[b.link];
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

  // A switch whose several links are blamed is itself the suspect.
  std::vector<std::uint32_t> culprit_links(fabric_.switch_count, 0);
  for (const auto& c : result.culprits) {
    if (c.component >= fabric_.links.size()) continue;
    for (SwitchId s : {fabric_.links[c.component].lower, fabric_.links[c.component].upper}) {
      if (s < culprit_links.size()) ++culprit_links[s];
    }
  }
  for (SwitchId s = 0; s < fabric_.switch_count; ++s) {
    if (switch_votes[s] == 0 && culprit_links[s] == 0) continue;
    out.switches.push_back({s, switch_votes[s], culprit_links[s]});
    if (culprit_links[s] >= 2) out.culprit_switches.push_back(s);
  }
  std::sort(out.switches.begin(), out.switches.end(), [](const SwitchRank& a, const SwitchRank& b) {
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
      out->processing_flags.push_back({h, v, median, w.hosts()[h].processing.count()});
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
