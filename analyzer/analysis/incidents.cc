#include "analyzer/analysis/incidents.h"

#include <algorithm>

namespace hostmesh::analysis {
namespace {

std::uint64_t RnicKey(HostId host, NicId nic) {
  return std::uint64_t{host} * kMaxNics + nic;
}

std::string Describe(const Component& c, bool is_switch, bool is_host) {
  if (is_switch) return "switch " + std::to_string(c.link);
  if (is_host) return "host " + std::to_string(c.host);
  if (c.kind == Component::Kind::kLink) return "link " + std::to_string(c.link);
  return "host " + std::to_string(c.host) + " nic " + std::to_string(c.nic);
}

}  // namespace

std::string_view LinkDirectionName(std::uint8_t direction) {
  switch (direction) {
    case kUpward:
      return "up";
    case kDownward:
      return "down";
    default:
      return "both";
  }
}

std::string_view IncidentKindName(IncidentKind kind) {
  switch (kind) {
    case IncidentKind::kRnicDown:
      return "rnic_down";
    case IncidentKind::kRnicLossy:
      return "rnic_lossy";
    case IncidentKind::kLinkLoss:
      return "link_loss";
    case IncidentKind::kSwitch:
      return "switch";
    case IncidentKind::kLatencyHotspot:
      return "latency_hotspot";
    case IncidentKind::kHostProcessing:
      return "host_processing_delay";
    case IncidentKind::kFlapping:
      return "flapping";
  }
  return "unknown";
}

std::optional<IncidentKind> IncidentKindFromName(std::string_view name) {
  for (auto kind : {IncidentKind::kRnicDown, IncidentKind::kRnicLossy, IncidentKind::kLinkLoss,
                    IncidentKind::kSwitch, IncidentKind::kLatencyHotspot,
                    IncidentKind::kHostProcessing, IncidentKind::kFlapping}) {
    if (IncidentKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

Incident* IncidentTracker::FindOpen(Category category, std::uint64_t key) {
  const auto it = open_index_.find(IndexKey(category, key));
  return it == open_index_.end() ? nullptr : &incidents_[it->second];
}

void IncidentTracker::RebuildIndex() {
  open_index_.clear();
  for (std::size_t i = 0; i < incidents_.size(); ++i) {
    if (incidents_[i].open) open_index_[IndexKey(keys_[i].first, keys_[i].second)] = i;
  }
}

bool IncidentTracker::Observed(const Incident& inc, Category category, const WindowReport& report,
                               std::vector<std::uint64_t>& observed_rnics) const {
  switch (category) {
    case Category::kLink:
    case Category::kLatencyLink:
      // A link routing seems to avoid is crossed only by stale paths.
      return std::binary_search(report.coverage.crossed.begin(), report.coverage.crossed.end(),
                                inc.suspect.link) &&
             !std::binary_search(report.coverage.avoided.begin(), report.coverage.avoided.end(),
                                 inc.suspect.link);
    case Category::kRnic:
    case Category::kLatencyRnic:
      if (observed_rnics.empty()) {
        for (const RnicStatus& r : report.rnics) {
          if (r.probes > 0) observed_rnics.push_back(RnicKey(r.host, r.nic));
        }
        std::sort(observed_rnics.begin(), observed_rnics.end());
      }
      return std::binary_search(observed_rnics.begin(), observed_rnics.end(),
                                RnicKey(inc.suspect.host, inc.suspect.nic));
    case Category::kSwitch:
      return report.coverage.traced_probes > 0 &&
             !std::binary_search(report.coverage.avoided_switches.begin(),
                                 report.coverage.avoided_switches.end(), inc.suspect.link);
    case Category::kHost:  // present_hosts is sorted
      return std::binary_search(report.present_hosts.begin(), report.present_hosts.end(),
                                inc.suspect.host);
  }
  return false;
}

std::vector<std::uint64_t> IncidentTracker::Update(const WindowReport& report) {
  const std::vector<Finding> findings = FindingsOf(report);
  std::vector<std::uint64_t> touched;
  std::vector<char> seen(incidents_.size(), 0);
  std::vector<std::uint64_t> named;
  for (const auto& f : findings) named.push_back(IndexKey(f.category, f.key));
  std::sort(named.begin(), named.end());
  CountLatencyStreaks(findings, report.start_ns);
  for (const auto& f : findings) {
    Incident* inc = IncidentFor(f, named, report.start_ns, seen);
    if (!inc) continue;  // a latency finding held back until it lasts
    seen[static_cast<std::size_t>(inc - incidents_.data())] = 1;
    Record(f, report, *inc);
    touched.push_back(inc->id);
    MergeSameFault(*inc, f, named, report.end_ns, touched);
  }
  ResolveQuiet(report, seen, touched);
  return touched;
}

// The window's verdicts as findings: loss and latency culprits (links,
// RNICs), culprit switches, hosts slow to process.
std::vector<IncidentTracker::Finding> IncidentTracker::FindingsOf(
    const WindowReport& report) const {
  std::vector<Finding> findings;
  // RNICs the window judge reads down, sorted: looked up per RNIC finding.
  std::vector<std::uint64_t> down_rnics;
  for (const RnicStatus& r : report.rnics) {
    if (r.state == RnicState::kDown) down_rnics.push_back(RnicKey(r.host, r.nic));
  }
  std::sort(down_rnics.begin(), down_rnics.end());
  auto add_suspects = [&](const Localization& loc, bool latency) {
    for (const auto& s : loc.culprits) {
      Finding f{};
      f.suspect = s.component;
      f.confidence = s.confidence;
      f.evidence = &s;
      if (s.component.kind == Component::Kind::kLink) {
        f.category = latency ? Category::kLatencyLink : Category::kLink;
        f.key = s.component.link;
        f.kind = latency ? IncidentKind::kLatencyHotspot : IncidentKind::kLinkLoss;
      } else {
        // The inference only blames an RNIC on conclusive evidence after the
        // links and switches on its paths took what they explain, so a lossy
        // RNIC (1-10%: a corrupting cable or NIC) is an incident of its own.
        f.category = latency ? Category::kLatencyRnic : Category::kRnic;
        f.key = RnicKey(s.component.host, s.component.nic);
        // Down as the window judge reads it (its loss, or its own probes
        // never sent while probes to it are lost), not only by the estimate.
        const bool down = s.loss >= config_.rnic_down_ratio ||
                          std::binary_search(down_rnics.begin(), down_rnics.end(), f.key);
        f.kind = latency ? IncidentKind::kLatencyHotspot
                 : down  ? IncidentKind::kRnicDown
                         : IncidentKind::kRnicLossy;
      }
      findings.push_back(f);
    }
  };
  add_suspects(report.loss, false);
  add_suspects(report.latency, true);
  for (const SwitchRank& r : report.loss.switches) {
    if (!r.culprit) continue;
    Finding f{};
    f.category = Category::kSwitch;
    f.key = r.id;
    f.kind = IncidentKind::kSwitch;
    f.suspect.link = r.id;
    f.confidence = r.confidence;
    findings.push_back(f);
  }
  for (const auto& p : report.processing_flags) {
    Finding f{};
    f.category = Category::kHost;
    f.key = p.host;
    f.kind = IncidentKind::kHostProcessing;
    f.suspect.host = p.host;
    f.confidence = p.confidence;
    findings.push_back(f);
  }
  return findings;
}

// A latency finding's streak of windows in a row; a window without it ends it.
void IncidentTracker::CountLatencyStreaks(const std::vector<Finding>& findings,
                                          std::int64_t start_ns) {
  std::unordered_map<std::uint64_t, Streak> streaks;
  for (const auto& f : findings) {
    if (f.category != Category::kLatencyLink && f.category != Category::kLatencyRnic) continue;
    const std::uint64_t key = IndexKey(f.category, f.key);
    const auto before = latency_streaks_.find(key);
    streaks[key] = before == latency_streaks_.end()
                       ? Streak{1, start_ns}
                       : Streak{before->second.windows + 1, before->second.first_start_ns};
  }
  latency_streaks_ = std::move(streaks);
}

// The open incident of a finding's component, one it adopts (the same fault
// seen as another component), or a new one; null while a latency finding is
// held back.
Incident* IncidentTracker::IncidentFor(const Finding& f, const std::vector<std::uint64_t>& named,
                                       std::int64_t start_ns, std::vector<char>& seen) {
  Incident* inc = FindOpen(f.category, f.key);
  if (!inc) inc = Adopt(f, named);
  const auto streak = latency_streaks_.find(IndexKey(f.category, f.key));
  if (!inc && streak != latency_streaks_.end() && HoldBack(f, streak->second)) return nullptr;
  if (!inc) {
    Incident fresh;
    fresh.id = next_id_++;
    fresh.suspect = f.suspect;
    fresh.summary =
        Describe(f.suspect, f.category == Category::kSwitch, f.category == Category::kHost);
    fresh.evidence.first_seen_ns = start_ns;
    if (streak != latency_streaks_.end()) {
      fresh.evidence.first_seen_ns = streak->second.first_start_ns;
      fresh.evidence.windows = streak->second.windows - 1;  // this one is counted below
    }
    open_index_[IndexKey(f.category, f.key)] = incidents_.size();
    incidents_.push_back(std::move(fresh));
    keys_.emplace_back(f.category, f.key);
    seen.push_back(0);
    inc = &incidents_.back();
  }
  return inc;
}

// What this window adds to an incident's kind, confidence and evidence.
void IncidentTracker::Record(const Finding& f, const WindowReport& report, Incident& inc) const {
  // A component seen flapping stays a flapping incident: its quiet windows
  // are the up phases of the same fault.
  const bool flapping =
      inc.kind == IncidentKind::kFlapping || (f.evidence != nullptr && f.evidence->flapping);
  inc.kind = flapping && (f.category == Category::kLink || f.category == Category::kRnic)
                 ? IncidentKind::kFlapping
                 : f.kind;
  inc.confidence = f.confidence;
  inc.clean_windows = 0;
  inc.unobserved_windows = 0;
  auto& ev = inc.evidence;
  ev.last_seen_ns = report.end_ns;
  ++ev.windows;
  if (f.evidence != nullptr && f.category == Category::kLink) {
    inc.lower = f.evidence->lower;
    inc.upper = f.evidence->upper;
  }
  if (f.evidence && f.suspect.kind == Component::Kind::kLink) {
    ev.directions |= f.suspect.direction == kBothWays ? (kUpward | kDownward) : f.suspect.direction;
  }
  if (f.evidence != nullptr && f.evidence->flapping) {
    ev.flaps += f.evidence->flaps;
    if (f.evidence->flap_period_s > 0) ev.flap_period_s = f.evidence->flap_period_s;
    for (const LinkId l : f.evidence->churn_shadows) {
      if (std::find(ev.churn_links.begin(), ev.churn_links.end(), l) == ev.churn_links.end()) {
        ev.churn_links.push_back(l);
      }
    }
  }
  if (f.evidence) {
    ev.failures += f.evidence->explained;
    ev.good += f.evidence->good;
    ev.loss = f.evidence->loss;
    ev.routed_around = f.evidence->routed_around;
    for (const auto& path : f.evidence->example_paths) {
      if (ev.example_paths.size() < config_.max_example_paths) ev.example_paths.push_back(path);
    }
    if (f.suspect.kind == Component::Kind::kLink) {
      const auto& ranks = f.category == Category::kLink ? report.loss.links : report.latency.links;
      for (const auto& r : ranks) {
        if (r.link == f.suspect.link) ev.votes += r.votes;
      }
    }
  }
  if (f.category == Category::kSwitch) {
    for (const auto& r : report.loss.switches) {
      if (r.id != f.key) continue;
      ev.votes += r.votes;
      ev.loss = r.loss;
      ev.routed_around = r.routed_around;
    }
  }
  if (f.category == Category::kHost) {
    for (const auto& p : report.processing_flags) {
      if (p.host == f.suspect.host) {
        ev.processing_p90_ns = p.p90_ns;
        ev.fleet_median_p90_ns = p.fleet_median_p90_ns;
      }
    }
  }
}

// Open incidents the window did not name: resolved after enough clean windows
// (their component observed healthy), or enough windows unobserved.
void IncidentTracker::ResolveQuiet(const WindowReport& report, const std::vector<char>& seen,
                                   std::vector<std::uint64_t>& touched) {
  std::vector<std::uint64_t> observed_rnics;
  for (std::size_t i = 0; i < incidents_.size(); ++i) {
    Incident& inc = incidents_[i];
    if (!inc.open || seen[i]) continue;
    // A fail-slow link under the bar but still slow: neither clean nor unseen.
    if (keys_[i].first == Category::kLatencyLink &&
        std::binary_search(report.coverage.slow.begin(), report.coverage.slow.end(),
                           inc.suspect.link)) {
      continue;
    }
    if (Observed(inc, keys_[i].first, report, observed_rnics)) {
      inc.unobserved_windows = 0;
      if (++inc.clean_windows < config_.resolve_after_clean_windows) continue;
    } else if (++inc.unobserved_windows < config_.resolve_after_unobserved_windows) {
      continue;
    }
    inc.open = false;
    inc.resolved_ns = report.end_ns;
    open_index_.erase(IndexKey(keys_[i].first, keys_[i].second));
    touched.push_back(inc.id);
  }
}

bool IncidentTracker::HoldBack(const Finding& f, const Streak& streak) const {
  const bool blatant =
      f.evidence != nullptr &&
      f.evidence->added_latency_ns > static_cast<double>(config_.slow_latency_floor.count());
  return !blatant && streak.windows < config_.hotspot_open_windows;
}

bool IncidentTracker::SameFault(std::size_t i, const Finding& f,
                                const std::vector<std::uint64_t>& named) const {
  const auto is_named = [&](Category category, std::uint64_t key) {
    return std::binary_search(named.begin(), named.end(), IndexKey(category, key));
  };
  const Incident& inc = incidents_[i];
  if (!inc.open) return false;
  if (f.category == Category::kSwitch) {
    return keys_[i].first == Category::kLink && inc.kind == IncidentKind::kLinkLoss &&
           (inc.lower == f.key || inc.upper == f.key) &&
           !is_named(Category::kLink, keys_[i].second);
  }
  if (f.category == Category::kLink && f.kind == IncidentKind::kLinkLoss && f.evidence != nullptr) {
    const std::uint64_t sw = keys_[i].second;
    return keys_[i].first == Category::kSwitch &&
           (sw == f.evidence->lower || sw == f.evidence->upper) && !is_named(Category::kSwitch, sw);
  }
  return false;
}

Incident* IncidentTracker::Adopt(const Finding& f, const std::vector<std::uint64_t>& named) {
  for (std::size_t i = 0; i < incidents_.size(); ++i) {
    if (!SameFault(i, f, named)) continue;
    Incident& inc = incidents_[i];
    open_index_.erase(IndexKey(keys_[i].first, keys_[i].second));
    keys_[i] = {f.category, f.key};
    open_index_[IndexKey(f.category, f.key)] = i;
    inc.suspect = f.suspect;
    inc.summary = Describe(f.suspect, f.category == Category::kSwitch, false);
    inc.lower = inc.upper = kUnknown;
    return &inc;
  }
  return nullptr;
}

void IncidentTracker::MergeSameFault(const Incident& kept, const Finding& f,
                                     const std::vector<std::uint64_t>& named, std::int64_t end_ns,
                                     std::vector<std::uint64_t>& touched) {
  if (f.category != Category::kSwitch) return;
  for (std::size_t i = 0; i < incidents_.size(); ++i) {
    if (incidents_[i].id == kept.id || !SameFault(i, f, named)) continue;
    Incident& inc = incidents_[i];
    inc.open = false;
    inc.resolved_ns = end_ns;
    inc.merged_into = kept.id;
    open_index_.erase(IndexKey(keys_[i].first, keys_[i].second));
    touched.push_back(inc.id);
  }
}

std::pair<IncidentTracker::Category, std::uint64_t> IncidentTracker::KeyOf(const Incident& inc) {
  const Component& c = inc.suspect;
  switch (inc.kind) {
    case IncidentKind::kRnicDown:
    case IncidentKind::kRnicLossy:
      return {Category::kRnic, RnicKey(c.host, c.nic)};
    case IncidentKind::kLinkLoss:
      return {Category::kLink, c.link};
    case IncidentKind::kSwitch:
      return {Category::kSwitch, c.link};
    case IncidentKind::kLatencyHotspot:
      return c.kind == Component::Kind::kLink
                 ? std::make_pair(Category::kLatencyLink, std::uint64_t{c.link})
                 : std::make_pair(Category::kLatencyRnic, RnicKey(c.host, c.nic));
    case IncidentKind::kHostProcessing:
      return {Category::kHost, c.host};
    case IncidentKind::kFlapping:
      return c.kind == Component::Kind::kLink
                 ? std::make_pair(Category::kLink, std::uint64_t{c.link})
                 : std::make_pair(Category::kRnic, RnicKey(c.host, c.nic));
  }
  return {Category::kLink, c.link};
}

void IncidentTracker::Restore(std::vector<Incident> incidents, std::uint64_t next_id) {
  std::sort(incidents.begin(), incidents.end(),
            [](const Incident& a, const Incident& b) { return a.id < b.id; });
  incidents_ = std::move(incidents);
  keys_.clear();
  next_id_ = std::max<std::uint64_t>(next_id, 1);
  for (const Incident& inc : incidents_) {
    keys_.push_back(KeyOf(inc));
    next_id_ = std::max(next_id_, inc.id + 1);
  }
  RebuildIndex();
}

void IncidentTracker::Prune(std::int64_t before_ns) {
  std::size_t out = 0;
  for (std::size_t i = 0; i < incidents_.size(); ++i) {
    if (!incidents_[i].open && incidents_[i].resolved_ns < before_ns) continue;
    // Never onto itself: a self-moved std::string is left empty (summary, diagnosis).
    if (out != i) {
      incidents_[out] = std::move(incidents_[i]);
      keys_[out] = keys_[i];
    }
    ++out;
  }
  incidents_.resize(out);
  keys_.resize(out);
  RebuildIndex();
}

const Incident* IncidentTracker::Find(std::uint64_t id) const {
  for (const auto& inc : incidents_) {
    if (inc.id == id) return &inc;
  }
  return nullptr;
}

bool IncidentTracker::SetDiagnosis(std::uint64_t id, IncidentDiagnosis diagnosis) {
  for (auto& inc : incidents_) {
    if (inc.id != id) continue;
    inc.diagnosis = std::move(diagnosis);
    return true;
  }
  return false;
}

std::vector<const Incident*> IncidentTracker::open() const {
  std::vector<const Incident*> out;
  for (const auto& inc : incidents_) {
    if (inc.open) out.push_back(&inc);
  }
  return out;
}

}  // namespace hostmesh::analysis
