#include "sim/scorecard.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "sim/information_limit.h"

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
  for (const auto& [kind, score] : o.by_kind) by_kind[kind] += score;
  for (const auto& [key, score] : o.name_times) name_times[key] += score;
  brier_sum += o.brier_sum;
  raw_brier_sum += o.raw_brier_sum;
  return *this;
}

KindScore& KindScore::operator+=(const KindScore& o) {
  faults += o.faults;
  detected += o.detected;
  windows += o.windows;
  windows_named += o.windows_named;
  windows_to_detect_sum += o.windows_to_detect_sum;
  estimate_ratios.insert(estimate_ratios.end(), o.estimate_ratios.begin(), o.estimate_ratios.end());
  return *this;
}

NameTimeScore& NameTimeScore::operator+=(const NameTimeScore& o) {
  faults += o.faults;
  named += o.named;
  measured_sum += o.measured_sum;
  limit_sum += o.limit_sum;
  return *this;
}

int RateBucket(double rate) {
  int bucket = 0;
  for (const double bound : kRateBucketBounds) bucket += rate >= bound;
  return bucket;
}

std::string RateBucketName(int bucket) {
  const auto percent = [](double v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%g", 100 * v);
    return std::string(buf);
  };
  const int last = static_cast<int>(kRateBucketBounds.size());
  if (bucket <= 0) return "<" + percent(kRateBucketBounds[0]) + "%";
  if (bucket >= last) return ">=" + percent(kRateBucketBounds[last - 1]) + "%";
  return percent(kRateBucketBounds[bucket - 1]) + "-" + percent(kRateBucketBounds[bucket]) + "%";
}

namespace {

// One method's score of one run, phase by phase: the windows (verdicts
// against the truth), the faults (found, how soon, in how many incidents),
// the incidents (opened with no fault active).
class MethodScorer {
 public:
  MethodScorer(const std::vector<Fault>& faults, const std::vector<FaultTruth>& truths,
               const std::vector<WindowRecord>& windows, std::int64_t window_ns,
               const std::vector<double>& limit_windows, bool paper, MethodScore& s)
      : faults_(faults),
        truths_(truths),
        windows_(windows),
        window_ns_(window_ns),
        limit_windows_(limit_windows),
        paper_(paper),
        s_(s),
        fault_free_(windows.size(), 1) {}

  void Score(const std::vector<IncidentSpan>& spans) {
    for (std::size_t w = 0; w < windows_.size(); ++w) ScoreWindow(w);
    for (std::size_t i = 0; i < faults_.size(); ++i) {
      if (!truths_[i].components.empty()) ScoreFault(i, spans);
    }
    for (const IncidentSpan& span : spans) ScoreIncident(span);
  }

 private:
  const Verdict& VerdictOf(std::size_t w) const {
    return paper_ ? windows_[w].paper : windows_[w].ours;
  }
  Counts& CountsOf(ComponentKey k) {
    return s_.by_category[std::min<std::size_t>(static_cast<std::size_t>(CategoryOf(k)),
                                                s_.by_category.size() - 1)];
  }
  void ScoreWindow(std::size_t w);
  void ScoreNamed(const Verdict& v, const std::set<ComponentKey>& truth,
                  const std::set<ComponentKey>& dont_care);
  void ScoreFault(std::size_t i, const std::vector<IncidentSpan>& spans);
  // named_in: the first window naming fault i, or windows_.size() for none.
  void ScoreNameTime(std::size_t i, std::size_t named_in);
  void ScoreIncident(const IncidentSpan& span);

  const std::vector<Fault>& faults_;
  const std::vector<FaultTruth>& truths_;
  const std::vector<WindowRecord>& windows_;
  const std::int64_t window_ns_;
  const std::vector<double>& limit_windows_;
  const bool paper_;
  MethodScore& s_;
  std::vector<char> fault_free_;
};

void MethodScorer::ScoreWindow(std::size_t w) {
  const WindowRecord& rec = windows_[w];
  std::set<ComponentKey> truth, dont_care;
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    if (truths_[i].components.empty()) continue;
    const std::int64_t overlap = Overlap(faults_[i], rec.start_ns, rec.end_ns);
    if (overlap <= 0) continue;
    fault_free_[w] = 0;
    auto& into = 2 * overlap >= window_ns_ ? truth : dont_care;
    into.insert(truths_[i].components.begin(), truths_[i].components.end());
    dont_care.insert(truths_[i].dont_care.begin(), truths_[i].dont_care.end());
  }
  const Verdict& v = VerdictOf(w);
  ScoreNamed(v, truth, dont_care);
  for (const ComponentKey k : truth) {
    if (Contains(v.named, k)) continue;
    ++s_.fn;
    ++CountsOf(k).fn;
  }
  const bool loss_truth = std::any_of(
      truth.begin(), truth.end(), [](ComponentKey k) { return CategoryOf(k) == Category::kLoss; });
  if (loss_truth) {
    ++s_.top1_windows;
    if (v.top_loss != 0 && truth.count(v.top_loss)) ++s_.top1_hits;
  }
  if (fault_free_[w]) {
    s_.fault_free_host_hours += double(rec.hosts) * double(rec.end_ns - rec.start_ns) / 3.6e12;
  }
}

// Each named component right, wrong or don't care, and its confidence binned.
void MethodScorer::ScoreNamed(const Verdict& v, const std::set<ComponentKey>& truth,
                              const std::set<ComponentKey>& dont_care) {
  for (std::size_t i = 0; i < v.named.size(); ++i) {
    const ComponentKey k = v.named[i];
    const bool right = truth.count(k) > 0;
    if (right) {
      ++s_.tp;
      ++CountsOf(k).tp;
    } else if (!dont_care.count(k)) {
      ++s_.fp;
      ++CountsOf(k).fp;
    }
    if (i >= v.confidence.size() || (!right && dont_care.count(k))) continue;
    const auto bin = std::min<std::size_t>(4, static_cast<std::size_t>(v.confidence[i] * 5));
    ++s_.named_by_confidence[bin];
    s_.confidence_sum[bin] += v.confidence[i];
    if (right) ++s_.right_by_confidence[bin];
    const double outcome = right ? 1.0 : 0.0;
    s_.brier_sum += (v.confidence[i] - outcome) * (v.confidence[i] - outcome);
    if (i < v.raw_confidence.size()) {
      const auto category = static_cast<std::size_t>(CategoryOf(k));
      if (category < s_.raw_counts.size()) s_.raw_counts[category].Add(v.raw_confidence[i], right);
      s_.raw_brier_sum += (v.raw_confidence[i] - outcome) * (v.raw_confidence[i] - outcome);
    }
  }
}

void MethodScorer::ScoreFault(std::size_t i, const std::vector<IncidentSpan>& spans) {
  const Fault& f = faults_[i];
  const auto named_in = [&](std::size_t w) {
    const Verdict& v = VerdictOf(w);
    return std::any_of(truths_[i].components.begin(), truths_[i].components.end(),
                       [&](ComponentKey k) { return Contains(v.named, k); });
  };
  const auto estimate = [&](std::size_t w, KindScore& kind) {
    const Verdict& v = VerdictOf(w);
    for (std::size_t n = 0; n < v.named.size() && n < v.added_ns.size(); ++n) {
      if (v.added_ns[n] > 0 && Contains(truths_[i].components, v.named[n])) {
        kind.estimate_ratios.push_back(v.added_ns[n] / static_cast<double>(f.added_ns));
        return;
      }
    }
  };
  std::size_t first = windows_.size();
  KindScore kind;
  for (std::size_t w = 0; w < windows_.size(); ++w) {
    const std::int64_t overlap = Overlap(f, windows_[w].start_ns, windows_[w].end_ns);
    if (overlap <= 0) continue;
    first = std::min(first, w);
    if (2 * overlap < window_ns_) continue;
    ++kind.windows;
    kind.windows_named += named_in(w);
    if (overlap == window_ns_ && f.added_ns > 0) estimate(w, kind);
  }
  if (kind.windows == 0) return;  // too short to be judged in any window
  kind.faults = 1;
  std::size_t named = windows_.size();
  for (std::size_t w = first; w < windows_.size(); ++w) {
    if (Overlap(f, windows_[w].start_ns, windows_[w].end_ns) <= 0) break;
    if (named_in(w)) {
      kind.detected = 1;
      kind.windows_to_detect_sum = double(w - first);
      named = w;
      break;
    }
  }
  ScoreNameTime(i, named);
  s_.faults += kind.faults;
  s_.detected += kind.detected;
  s_.windows_to_detect_sum += kind.windows_to_detect_sum;
  s_.by_kind[f.kind] += kind;
  std::uint64_t count = 0;
  for (const IncidentSpan& span : spans) {
    if (!Contains(truths_[i].components, span.key)) continue;
    if (span.first_ns < f.end_ns + 2 * window_ns_ && span.last_ns > f.start_ns) ++count;
  }
  if (count > 0) {
    s_.incidents_per_fault_sum += double(count);
    ++s_.faults_with_incident;
  }
}

void MethodScorer::ScoreNameTime(std::size_t i, std::size_t named_in) {
  const Fault& f = faults_[i];
  if (i >= limit_windows_.size() || limit_windows_[i] < 0) return;
  NameTimeScore& score = s_.name_times[{f.kind, RateBucket(f.rate)}];
  ++score.faults;
  if (named_in >= windows_.size()) return;
  ++score.named;
  score.measured_sum +=
      static_cast<double>(windows_[named_in].end_ns - f.start_ns) / static_cast<double>(window_ns_);
  score.limit_sum += LimitTimeToName(f, limit_windows_[i], window_ns_);
}

void MethodScorer::ScoreIncident(const IncidentSpan& span) {
  ++s_.incidents;
  for (std::size_t w = 0; w < windows_.size(); ++w) {
    if (span.first_ns >= windows_[w].start_ns && span.first_ns < windows_[w].end_ns) {
      if (fault_free_[w]) ++s_.false_incidents_fault_free;
      break;
    }
  }
}

}  // namespace

Scorecard ScoreRun(const Fleet& fleet, const std::vector<Fault>& faults,
                   const std::vector<WindowRecord>& windows,
                   const std::vector<IncidentSpan>& our_incidents, std::int64_t window_ns,
                   const std::vector<double>& limit_windows) {
  std::vector<FaultTruth> truths;
  truths.reserve(faults.size());
  for (const Fault& f : faults) truths.push_back(TruthOf(fleet, f));
  Scorecard card;
  MethodScorer(faults, truths, windows, window_ns, limit_windows, false, card.ours)
      .Score(our_incidents);
  MethodScorer(faults, truths, windows, window_ns, limit_windows, true, card.paper)
      .Score(RunsOf(windows, true));
  return card;
}

}  // namespace hostmesh::sim
