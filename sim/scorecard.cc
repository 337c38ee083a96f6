#include "sim/scorecard.h"

#include <algorithm>
#include <map>
#include <set>

namespace hostmesh::sim {
namespace {

bool Contains(const std::vector<ComponentKey>& v, ComponentKey k) {
  return std::find(v.begin(), v.end(), k) != v.end();
}

std::int64_t Overlap(const Fault& f, std::int64_t start, std::int64_t end) {
  return std::max<std::int64_t>(0, std::min(f.end_ns, end) - std::max(f.start_ns, start));
}

ComponentKey LinkOrRnic(const Fleet& fleet, Category c, LinkId link) {
  if (fleet.is_nic_link(link))
    return RnicKey(c, fleet.nic_link_host(link), fleet.nic_link_nic(link));
  return LinkKey(c, link);
}

}  // namespace

FaultTruth TruthOf(const Fleet& fleet, const Fault& f) {
  FaultTruth t;
  switch (f.kind) {
    case FaultKind::kLinkLoss:
    case FaultKind::kLinkDown:
    case FaultKind::kLinkFlap:
    case FaultKind::kBlackhole:
    case FaultKind::kPfcMisconfig:  // the loss; its latency is don't care
      if (f.link < fleet.link_count())
        t.components.push_back(LinkOrRnic(fleet, Category::kLoss, f.link));
      if (f.kind == FaultKind::kPfcMisconfig && f.link < fleet.link_count())
        t.dont_care.push_back(LinkOrRnic(fleet, Category::kLatency, f.link));
      break;
    case FaultKind::kRnicDown:
    case FaultKind::kRnicLoss:
    case FaultKind::kRnicFlap:
    case FaultKind::kMissingRoute:
    case FaultKind::kPcieDowngrade:
      t.components.push_back(RnicKey(Category::kLoss, f.host, f.nic));
      break;
    case FaultKind::kSwitchLoss:
      t.components.push_back(SwitchKey(Category::kLoss, f.switch_id));
      for (LinkId l = 0; l < fleet.link_count(); ++l) {
        if (fleet.lower_device(l) == f.switch_id || fleet.upper_device(l) == f.switch_id) {
          t.dont_care.push_back(LinkOrRnic(fleet, Category::kLoss, l));
        }
      }
      break;
    case FaultKind::kLinkLatency:
    case FaultKind::kEcmpCollision:
      if (f.link < fleet.link_count())
        t.components.push_back(LinkOrRnic(fleet, Category::kLatency, f.link));
      break;
    case FaultKind::kHostProcessing:
      t.components.push_back(HostKey(f.host));
      break;
    case FaultKind::kHostLeave:
    case FaultKind::kAgentRestart:
      break;
  }
  return t;
}

std::vector<IncidentSpan> OurIncidents(const std::vector<analysis::Incident>& incidents,
                                       const std::vector<std::uint32_t>& host_of,
                                       std::int64_t wall_offset_ns) {
  std::vector<IncidentSpan> out;
  const auto host = [&](analysis::HostId h) { return h < host_of.size() ? host_of[h] : h; };
  for (const analysis::Incident& inc : incidents) {
    // Resolved as one fault with the incident it was merged into, which goes on.
    if (inc.merged_into != 0) continue;
    IncidentSpan span;
    const analysis::Component& s = inc.suspect;
    switch (inc.kind) {
      case analysis::IncidentKind::kRnicDown:
      case analysis::IncidentKind::kRnicLossy:
        span.key = RnicKey(Category::kLoss, host(s.host), s.nic);
        break;
      case analysis::IncidentKind::kLinkLoss:
        span.key = LinkKey(Category::kLoss, s.link);
        break;
      case analysis::IncidentKind::kFlapping:
        span.key = s.kind == analysis::Component::Kind::kLink
                       ? LinkKey(Category::kLoss, s.link)
                       : RnicKey(Category::kLoss, host(s.host), s.nic);
        break;
      case analysis::IncidentKind::kSwitch:
        span.key = SwitchKey(Category::kLoss, s.link);
        break;
      case analysis::IncidentKind::kLatencyHotspot:
        span.key = s.kind == analysis::Component::Kind::kLink
                       ? LinkKey(Category::kLatency, s.link)
                       : RnicKey(Category::kLatency, host(s.host), s.nic);
        break;
      case analysis::IncidentKind::kHostProcessing:
        span.key = HostKey(host(s.host));
        break;
    }
    span.kind = std::string(analysis::IncidentKindName(inc.kind));
    if (!inc.diagnosis.rule.empty()) span.diagnosis = inc.diagnosis.type;
    span.first_ns = inc.evidence.first_seen_ns - wall_offset_ns;
    span.last_ns = inc.evidence.last_seen_ns - wall_offset_ns;
    out.push_back(span);
  }
  return out;
}

std::vector<IncidentSpan> RunsOf(const std::vector<WindowRecord>& windows, bool paper) {
  std::vector<IncidentSpan> out;
  std::map<ComponentKey, std::size_t> open;  // key -> index in out
  for (const WindowRecord& w : windows) {
    const Verdict& v = paper ? w.paper : w.ours;
    std::map<ComponentKey, std::size_t> still;
    for (const ComponentKey k : v.named) {
      const auto it = open.find(k);
      if (it != open.end()) {
        out[it->second].last_ns = w.end_ns;
        still.emplace(k, it->second);
      } else {
        still.emplace(k, out.size());
        out.push_back({k, w.start_ns, w.end_ns});
      }
    }
    open = std::move(still);
  }
  return out;
}

namespace {
std::uint64_t Scored(const MethodScore& s) {
  std::uint64_t n = 0;
  for (const std::uint64_t x : s.named_by_confidence) n += x;
  return n;
}
}  // namespace

double MethodScore::brier() const {
  const std::uint64_t n = Scored(*this);
  return n == 0 ? 0 : brier_sum / double(n);
}
double MethodScore::raw_brier() const {
  const std::uint64_t n = Scored(*this);
  return n == 0 ? 0 : raw_brier_sum / double(n);
}

MethodScore& MethodScore::operator+=(const MethodScore& o) {
  tp += o.tp;
  fp += o.fp;
  fn += o.fn;
  top1_hits += o.top1_hits;
  top1_windows += o.top1_windows;
  faults += o.faults;
  detected += o.detected;
  windows_to_detect_sum += o.windows_to_detect_sum;
  incidents += o.incidents;
  false_incidents_fault_free += o.false_incidents_fault_free;
  fault_free_host_hours += o.fault_free_host_hours;
  incidents_per_fault_sum += o.incidents_per_fault_sum;
  faults_with_incident += o.faults_with_incident;
  for (std::size_t i = 0; i < named_by_confidence.size(); ++i) {
    named_by_confidence[i] += o.named_by_confidence[i];
    right_by_confidence[i] += o.right_by_confidence[i];
    confidence_sum[i] += o.confidence_sum[i];
  }
  for (std::size_t i = 0; i < raw_counts.size(); ++i) raw_counts[i] += o.raw_counts[i];
  for (std::size_t i = 0; i < by_category.size(); ++i) by_category[i] += o.by_category[i];
  brier_sum += o.brier_sum;
  raw_brier_sum += o.raw_brier_sum;
  return *this;
}

namespace {

void ScoreMethod(const std::vector<Fault>& faults, const std::vector<FaultTruth>& truths,
                 const std::vector<WindowRecord>& windows, const std::vector<IncidentSpan>& spans,
                 std::int64_t window_ns, bool paper, MethodScore& s) {
  std::vector<char> fault_free(windows.size(), 1);
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const WindowRecord& rec = windows[w];
    std::set<ComponentKey> truth, dont_care;
    for (std::size_t i = 0; i < faults.size(); ++i) {
      if (truths[i].components.empty()) continue;
      const std::int64_t overlap = Overlap(faults[i], rec.start_ns, rec.end_ns);
      if (overlap <= 0) continue;
      fault_free[w] = 0;
      auto& into = 2 * overlap >= window_ns ? truth : dont_care;
      into.insert(truths[i].components.begin(), truths[i].components.end());
      dont_care.insert(truths[i].dont_care.begin(), truths[i].dont_care.end());
    }
    const Verdict& v = paper ? rec.paper : rec.ours;
    const auto counts_of = [&](ComponentKey k) -> Counts& {
      return s.by_category[std::min<std::size_t>(static_cast<std::size_t>(CategoryOf(k)),
                                                 s.by_category.size() - 1)];
    };
    for (std::size_t i = 0; i < v.named.size(); ++i) {
      const ComponentKey k = v.named[i];
      const bool right = truth.count(k) > 0;
      if (right) {
        ++s.tp;
        ++counts_of(k).tp;
      } else if (!dont_care.count(k)) {
        ++s.fp;
        ++counts_of(k).fp;
      }
      if (i < v.confidence.size() && (right || !dont_care.count(k))) {
        const auto bin = std::min<std::size_t>(4, static_cast<std::size_t>(v.confidence[i] * 5));
        ++s.named_by_confidence[bin];
        s.confidence_sum[bin] += v.confidence[i];
        if (right) ++s.right_by_confidence[bin];
        const double outcome = right ? 1.0 : 0.0;
        s.brier_sum += (v.confidence[i] - outcome) * (v.confidence[i] - outcome);
        if (i < v.raw_confidence.size()) {
          const auto category = static_cast<std::size_t>(CategoryOf(k));
          if (category < s.raw_counts.size())
            s.raw_counts[category].Add(v.raw_confidence[i], right);
          s.raw_brier_sum += (v.raw_confidence[i] - outcome) * (v.raw_confidence[i] - outcome);
        }
      }
    }
    for (const ComponentKey k : truth) {
      if (Contains(v.named, k)) continue;
      ++s.fn;
      ++counts_of(k).fn;
    }
    const bool loss_truth = std::any_of(truth.begin(), truth.end(), [](ComponentKey k) {
      return CategoryOf(k) == Category::kLoss;
    });
    if (loss_truth) {
      ++s.top1_windows;
      if (v.top_loss != 0 && truth.count(v.top_loss)) ++s.top1_hits;
    }
    if (fault_free[w]) {
      s.fault_free_host_hours += double(rec.hosts) * double(rec.end_ns - rec.start_ns) / 3.6e12;
    }
  }

  for (std::size_t i = 0; i < faults.size(); ++i) {
    const Fault& f = faults[i];
    if (truths[i].components.empty()) continue;
    std::size_t first = windows.size();
    bool judged = false;
    for (std::size_t w = 0; w < windows.size(); ++w) {
      const std::int64_t overlap = Overlap(f, windows[w].start_ns, windows[w].end_ns);
      if (overlap <= 0) continue;
      first = std::min(first, w);
      judged |= 2 * overlap >= window_ns;
    }
    if (!judged) continue;  // too short to be judged in any window
    ++s.faults;
    for (std::size_t w = first; w < windows.size(); ++w) {
      if (Overlap(f, windows[w].start_ns, windows[w].end_ns) <= 0) break;
      const Verdict& v = paper ? windows[w].paper : windows[w].ours;
      const bool named = std::any_of(truths[i].components.begin(), truths[i].components.end(),
                                     [&](ComponentKey k) { return Contains(v.named, k); });
      if (named) {
        ++s.detected;
        s.windows_to_detect_sum += double(w - first);
        break;
      }
    }
    std::uint64_t count = 0;
    for (const IncidentSpan& span : spans) {
      if (!Contains(truths[i].components, span.key)) continue;
      if (span.first_ns < f.end_ns + 2 * window_ns && span.last_ns > f.start_ns) ++count;
    }
    if (count > 0) {
      s.incidents_per_fault_sum += double(count);
      ++s.faults_with_incident;
    }
  }

  for (const IncidentSpan& span : spans) {
    ++s.incidents;
    for (std::size_t w = 0; w < windows.size(); ++w) {
      if (span.first_ns >= windows[w].start_ns && span.first_ns < windows[w].end_ns) {
        if (fault_free[w]) ++s.false_incidents_fault_free;
        break;
      }
    }
  }
}

}  // namespace

Scorecard ScoreRun(const Fleet& fleet, const std::vector<Fault>& faults,
                   const std::vector<WindowRecord>& windows,
                   const std::vector<IncidentSpan>& our_incidents, std::int64_t window_ns) {
  std::vector<FaultTruth> truths;
  truths.reserve(faults.size());
  for (const Fault& f : faults) truths.push_back(TruthOf(fleet, f));
  Scorecard card;
  ScoreMethod(faults, truths, windows, our_incidents, window_ns, false, card.ours);
  ScoreMethod(faults, truths, windows, RunsOf(windows, true), window_ns, true, card.paper);
  return card;
}

}  // namespace hostmesh::sim
