#include "analyzer/analysis/analysis.h"

#include <algorithm>
#include <utility>

namespace hostmesh::analysis {
namespace {
constexpr std::int64_t kMaxEmptyWindows = 1000;

// The start of the window of `width` that holds t (t may be negative).
std::int64_t FloorToWindow(std::int64_t t, std::int64_t width) {
  return t - ((t % width) + width) % width;
}
}  // namespace

Analysis::Analysis(AnalysisConfig config, FabricMap fabric)
    : config_(config),
      fabric_(std::move(fabric)),
      paths_(config_.path_ttl, PathTable::kDefaultChurnHold, config_.max_paths_per_host),
      routes_(config_.route_withdrawn_alpha),
      judge_(config_, fabric_, paths_, routes_),
      slow_threshold_ns_(config_.slow_latency_floor.count()) {}

bool Analysis::Future(std::int64_t t_ns) const {
  return now_ns_ != 0 && t_ns > now_ns_ + config_.max_future.count();
}

void Analysis::AddPath(const PathRecord& path) {
  if (path.src_nic >= kMaxNics || path.dst_nic >= kMaxNics) return;
  // The windows that ended by this trace are judged on the draws before it
  // (not a trace from the future: it would freeze the counts of every window
  // until then).
  if (!Future(path.time_ns)) routes_.Close(FloorToWindow(path.time_ns, config_.window.count()));
  routes_.AddTrace(path, paths_.Add(path), fabric_,
                   PathTable::Key(path.host, path.src_nic, path.dst_nic, path.src_port));
  ++stats_.paths;
}

void Analysis::SetRails(HostId host, std::vector<int> rails) {
  if (fabric_.rails.size() <= host) fabric_.rails.resize(std::size_t{host} + 1);
  fabric_.rails[host] = std::move(rails);
}

void Analysis::SetFabric(std::vector<FabricMap::LinkEnds> links, std::size_t switch_count) {
  fabric_.links = std::move(links);
  fabric_.switch_count = switch_count;
}

void Analysis::ResumeAfter(std::int64_t end_ns) {
  const std::int64_t width = config_.window.count();
  const std::int64_t start = FloorToWindow(end_ns, width);
  if (start <= judged_before_ns_) return;
  judged_before_ns_ = start;
  started_ = true;
  windows_.erase(windows_.begin(), windows_.lower_bound(start));
  last_ = nullptr;
}

WindowAccumulator& Analysis::WindowFor(std::int64_t start_ns) {
  if (last_ && last_->start_ns() == start_ns) return *last_;
  auto& slot = windows_[start_ns];
  if (!slot) {
    slot = std::make_unique<WindowAccumulator>(start_ns, start_ns + config_.window.count(),
                                               slow_threshold_ns_, flap_watch_);
  }
  last_ = slot.get();
  return *slot;
}

AddStatus Analysis::AddResult(const ProbeRecord& r) {
  if (r.src_nic >= kMaxNics || r.dst_nic >= kMaxNics || r.src_nic == r.dst_nic ||
      r.send_time_ns <= 0) {
    ++stats_.invalid;
    return AddStatus::kInvalid;
  }
  const std::int64_t width = config_.window.count();
  const std::int64_t start = r.send_time_ns - r.send_time_ns % width;
  const bool future = Future(r.send_time_ns);
  // A probe its own NIC failed to send crossed no link: counting it as a
  // failure would blame the network for a local fault. Its window counts it
  // for the sending RNIC's verdict (a down RNIC, not a lossy one).
  if (r.send_failed) {
    ++stats_.send_failed;
    if (!future && start >= judged_before_ns_) WindowFor(start).AddSendFailure(r.host, r.src_nic);
    return AddStatus::kSendFailed;
  }
  if (future) {
    ++stats_.future;
    return AddStatus::kFuture;
  }
  if (start < judged_before_ns_) {
    ++stats_.late;
    return AddStatus::kLate;
  }
  const int rail = judge_.RailOf(r.host, r.src_nic);
  const MiddleId middle = paths_.Use(r.host, r.src_nic, r.dst_nic, r.src_port);
  routes_.AddOutcome(PathTable::Key(r.host, r.src_nic, r.dst_nic, r.src_port), !r.timeout, fabric_);
  WindowAccumulator& window = WindowFor(start);
  window.Add(r, middle, std::max(rail, 0));
  if (flap_watch_.size > 0) {
    window.flaps().Record(
        r, middle == PathTable::kNoPath ? std::span<const LinkId>{} : paths_.Middle(middle));
  }
  ++stats_.accepted;
  return AddStatus::kAccepted;
}

void Analysis::AddResults(std::span<const ProbeRecord> results) {
  // Two stages ahead of the result being added: the path table's slot of the
  // result kAhead on is loaded; kAhead / 2 on, that slot is in cache, and a
  // 5-tuple with no path has its slot in the window's untraced index loaded.
  // Far enough for a slot to arrive from memory, near enough that it is still
  // cached when its result comes.
  constexpr std::size_t kAhead = 8;
  const std::size_t n = results.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      const ProbeRecord& next = results[i + kAhead];
      paths_.Prefetch(next.host, next.src_nic, next.dst_nic, next.src_port);
    }
    if (i + kAhead / 2 < n && last_ != nullptr) {
      const ProbeRecord& next = results[i + kAhead / 2];
      if (paths_.Lookup(next.host, next.src_nic, next.dst_nic, next.src_port) ==
          PathTable::kNoPath) {
        last_->PrefetchUntraced(
            PathTable::Key(next.host, next.src_nic, next.dst_nic, next.src_port));
      }
    }
    AddResult(results[i]);
  }
}

std::vector<WindowReport> Analysis::Advance(std::int64_t now_ns) {
  now_ns_ = std::max(now_ns_, now_ns);
  // Ageing may orphan fabric paths that open windows count probes under: they
  // stay readable until the newest window open now is judged.
  paths_.AdvanceTo(now_ns_);
  routes_.Expire(now_ns_, fabric_);
  paths_.HoldOrphans(windows_.empty() ? PathTable::kNoWindow : windows_.rbegin()->first);
  const std::int64_t watermark = now_ns_ - config_.grace.count();
  std::vector<WindowReport> reports;
  const std::int64_t width = config_.window.count();
  // Every window from the first one opened on is judged, even with no result
  // in it: its report names the absent hosts, and incidents age by it.
  std::int64_t start =
      started_ ? judged_before_ns_ : (windows_.empty() ? watermark : windows_.begin()->first);
  for (; start + width <= watermark; start += width) {
    const auto it = windows_.find(start);
    if (it == windows_.end() && watermark - start > kMaxEmptyWindows * width) {
      // After a long silence (analyzer clock jump, fleet gone) skip to the
      // last few windows, but never past one that holds results.
      std::int64_t to = watermark - kMaxEmptyWindows * width;
      to = FloorToWindow(to, width);
      if (!windows_.empty()) to = std::min(to, windows_.begin()->first);
      if (to > start) {
        start = to - width;
        continue;
      }
    }
    started_ = true;
    if (it == windows_.end()) {
      reports.push_back(
          judge_.Judge(WindowAccumulator(start, start + width, slow_threshold_ns_), &shedding_));
    } else {
      stats_.resolved_late += it->second->ResolveLatePaths(paths_);
      stats_.untraced_overflow += it->second->untraced().overflow;
      stats_.port_probes_untallied += it->second->flaps().untallied_port_probes();
      reports.push_back(judge_.Judge(*it->second, &shedding_));
      if (last_ == it->second.get()) last_ = nullptr;
      windows_.erase(it);
    }
    ++stats_.windows_judged;
    // Culprits are watched for flapping from now on, in the windows already
    // open too (from part way through: a flap verdict and the timing of route
    // churn need the window after a fault starts, not the one after that).
    flap_watch_.Clear();
    for (const Suspect& c : reports.back().loss.culprits) {
      if (c.component.kind == Component::Kind::kLink) {
        flap_watch_.AddLink(c.component.link);
      } else {
        flap_watch_.AddRnic(c.component.host, c.component.nic);
      }
      for (const LinkId shadow : c.churn_shadows) flap_watch_.AddLink(shadow);
    }
    for (auto& [open_start, open] : windows_) open->flaps().Rewatch(flap_watch_);
    // The next windows flag probes slow relative to this one's median.
    const auto& latency = reports.back().sla.cluster.latency;
    if (latency.count > 0) {
      slow_threshold_ns_ =
          std::max(config_.slow_latency_floor.count(),
                   static_cast<std::int64_t>(config_.slow_latency_factor * latency.p50));
    }
  }
  // Windows that ended by the watermark are closed to results, with or without
  // a report (before the first window there is nothing to report).
  const std::int64_t judged = FloorToWindow(watermark, width);
  judged_before_ns_ = std::max(judged_before_ns_, judged);
  routes_.Forget(judged_before_ns_ + width);  // the end of the next window to judge
  paths_.FreeOrphans(judged_before_ns_);
  stats_.paths_aged_out = paths_.aged_out();
  stats_.paths_refused_host_cap = paths_.refused_for_host_cap();
  stats_.paths_evicted_host_cap = paths_.evicted_for_host_cap();
  stats_.path_middles_freed = paths_.middles_freed();
  stats_.paths_live = paths_.size();
  stats_.path_table_bytes = paths_.memory_bytes();
  stats_.route_draws_awaiting = routes_.awaiting();
  stats_.route_draws_overflow = routes_.overflow();
  return reports;
}

std::size_t Analysis::open_window_bytes() const {
  std::size_t bytes = 0;
  for (const auto& [start, w] : windows_) bytes += w->memory_bytes();
  return bytes;
}

}  // namespace hostmesh::analysis
