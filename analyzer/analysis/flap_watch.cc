#include "analyzer/analysis/flap_watch.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "analyzer/analysis/sequential_inference.h"

namespace hostmesh::analysis {
namespace {

// Evidence needed before the watch speaks, and how unlikely under a steady
// loss its down episodes must be: as a z <= -4, about once in 30,000 tests.
constexpr std::size_t kMinOutcomes = 20;
constexpr std::size_t kMinEach = 5;
constexpr double kChance = 3.2e-5;  // P(Z <= -4)

}  // namespace

void FlapRecorder::Record(const ProbeRecord& r, std::span<const LinkId> middle) {
  if (watch_.size == 0) return;
  const std::int64_t ms = (r.send_time_ns - start_ns_) / 1'000'000;
  if (ms < 0 || ms >= (1 << 30)) return;
  const std::uint32_t entry = Entry(static_cast<std::uint32_t>(ms), r.timeout);
  for (const NicId nic : {r.src_nic, r.dst_nic}) {
    if (const auto* slot = watch_.rnics.Find(std::uint64_t{r.host} * kMaxNics + nic)) {
      trails_[*slot].push_back(entry);
    }
  }
  // A probe across two watched links (an uplink and a downlink both named)
  // is marked shared on each: its failure may be the other's.
  const auto watched = std::count_if(middle.begin(), middle.end(), [&](LinkId l) {
    return l != kUnknown && watch_.links.Find(l) != nullptr;
  });
  const std::uint32_t on_link = entry | (watched > 1 ? kShared : 0u);
  for (const LinkId l : middle) {
    if (l == kUnknown) continue;
    if (const auto* slot = watch_.links.Find(l)) {
      trails_[*slot].push_back(on_link);
      ports_[*slot].Add(r.src_port, r.timeout);
    }
  }
}

void FlapRecorder::Rewatch(const FlapWatchList& watch) {
  std::vector<Trail> trails(watch.size);
  std::vector<PortTally> ports(watch.size);
  const auto carry = [&](const FlatMap& now, const FlatMap& before) {
    now.ForEach([&](std::uint64_t key, std::uint32_t slot) {
      if (const auto* old = before.Find(key)) {
        trails[slot] = std::move(trails_[*old]);
        ports[slot] = std::move(ports_[*old]);
      }
    });
  };
  carry(watch.rnics, watch_.rnics);
  carry(watch.links, watch_.links);
  watch_ = watch;
  trails_ = std::move(trails);
  ports_ = std::move(ports);
}

std::vector<PortOutcome> FlapRecorder::LinkPorts(LinkId link) const {
  const auto* slot = watch_.links.Find(link);
  return slot == nullptr ? std::vector<PortOutcome>{} : ports_[*slot].Outcomes();
}

std::uint64_t FlapRecorder::untallied_port_probes() const {
  std::uint64_t n = 0;
  for (const PortTally& t : ports_) n += t.untallied_probes();
  return n;
}

std::optional<FlapVerdict> FlapRecorder::JudgeRnic(HostId host, NicId nic,
                                                   std::int64_t window_ns) const {
  const auto* slot = watch_.rnics.Find(std::uint64_t{host} * kMaxNics + nic);
  if (slot == nullptr) return std::nullopt;
  return Judge(trails_[*slot], window_ns);
}

std::optional<FlapVerdict> FlapRecorder::JudgeLink(LinkId link, std::int64_t window_ns) const {
  const auto* slot = watch_.links.Find(link);
  if (slot == nullptr) return std::nullopt;
  return Judge(trails_[*slot], window_ns);
}

FlapRecorder::Trail FlapRecorder::ByTime(const Trail& trail) {
  // By send time only: probes sent in the same millisecond keep the order they
  // arrived in (sorting by outcome too would make runs where there are none).
  Trail sorted = trail;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](std::uint32_t a, std::uint32_t b) { return Ms(a) < Ms(b); });
  return sorted;
}

std::optional<ChurnOverlap> FlapRecorder::FailuresWhileDown(LinkId failing,
                                                            std::span<const LinkId> down) const {
  const auto* f = watch_.links.Find(failing);
  if (f == nullptr) return std::nullopt;
  std::vector<Trail> outcomes;
  for (const LinkId d : down) {
    if (const auto* slot = watch_.links.Find(d)) outcomes.push_back(ByTime(trails_[*slot]));
  }
  if (outcomes.empty()) return std::nullopt;
  // Inside an episode when a down link's outcome just before or just after
  // this send time (same millisecond included) is a failure.
  const auto inside = [](const Trail& by_time, std::uint32_t ms) {
    const auto after = std::lower_bound(by_time.begin(), by_time.end(), ms,
                                        [](std::uint32_t e, std::uint32_t t) { return Ms(e) < t; });
    const auto last_by =
        std::upper_bound(by_time.begin(), by_time.end(), ms,
                         [](std::uint32_t t, std::uint32_t e) { return t < Ms(e); });
    return (after != by_time.end() && Failed(*after)) ||
           (last_by != by_time.begin() && Failed(*std::prev(last_by)));
  };
  ChurnOverlap o;
  for (const std::uint32_t entry : trails_[*f]) {
    const bool failed = Failed(entry);
    o.failures += failed;
    if (std::none_of(outcomes.begin(), outcomes.end(),
                     [&](const Trail& t) { return inside(t, Ms(entry)); })) {
      // Outside, only what no other watched link may explain is its own.
      if ((entry & kShared) == 0) {
        ++o.outside_probes;
        o.outside += failed;
      }
    } else {
      ++o.inside_probes;
      o.inside += failed;
    }
  }
  return o;
}

bool IsChurn(const ChurnOverlap& o, const ChurnTest& t) {
  if (o.inside == 0) return false;
  if (o.inside >= t.inside_share * o.failures) return true;
  const double outside = o.outside;
  const double n = o.outside_probes;
  const bool excess = outside >= n * (t.background + t.min_excess);
  return !(excess && PoissonTail(outside, n * t.background) < t.own_alpha);
}

std::optional<FlapVerdict> FlapRecorder::Judge(const Trail& trail, std::int64_t window_ns) const {
  if (trail.size() < kMinOutcomes) return std::nullopt;
  const Trail sorted = ByTime(trail);
  // A plain array: std::vector<bool> has no contiguous storage for a span.
  std::unique_ptr<bool[]> failed(new bool[sorted.size()]);
  for (std::size_t i = 0; i < sorted.size(); ++i) failed[i] = Failed(sorted[i]);
  return JudgeOutcomes(std::span<const bool>(failed.get(), sorted.size()), window_ns);
}

FlapVerdict JudgeOutcomes(std::span<const bool> failed, std::int64_t window_ns) {
  FlapVerdict v;
  const double n = static_cast<double>(failed.size());
  double n1 = 0;
  for (const bool f : failed) n1 += f ? 1 : 0;
  const double n2 = n - n1;
  if (failed.size() < kMinOutcomes || n1 < kMinEach || n2 < kMinEach) return v;

  // The runs, in order: (failed, length).
  std::vector<std::pair<bool, std::size_t>> runs;
  for (std::size_t i = 0, start = 0; i < failed.size(); ++i) {
    if (i + 1 < failed.size() && failed[i + 1] == failed[i]) continue;
    runs.emplace_back(failed[i], i + 1 - start);
    start = i + 1;
  }
  // The longest run of failures (of successes) chance gives if the window
  // lost probes steadily at its rate: n p (1 - p) runs of each, a run reaching
  // length L with chance p^(L-1); longer than where fewer than one is expected.
  const double loss = n1 / n;
  const double chance_runs = std::log(n * loss * (1 - loss));
  const double longest_down = 1 + chance_runs / std::log(1 / loss);
  const double longest_up = 1 + chance_runs / std::log(1 / (1 - loss));

  // A flap alternates down phases, where every probe is lost, with clean
  // ones: failure runs longer than chance makes them (down episodes) with a
  // success run longer than chance between two of them. A loss that starts
  // or ends in the window, or a lossy component that goes down, has no clean
  // phase between its long failure runs.
  std::uint32_t episodes = 0;
  double shortest = n;
  bool alternates = false, clean_since_episode = false;
  for (const auto& [down, length] : runs) {
    const double len = static_cast<double>(length);
    if (down && len > longest_down) {
      alternates = alternates || (episodes > 0 && clean_since_episode);
      ++episodes;
      shortest = std::min(shortest, len);
      clean_since_episode = false;
    } else if (!down && len > longest_up) {
      clean_since_episode = true;
    }
  }
  // Together too unlikely for chance: so many failure runs at least as long
  // as the shortest episode (two pairs of failures at 3% loss are not).
  const double chance_episodes = n * loss * (1 - loss) * std::pow(loss, shortest - 1);
  const bool real = episodes > 0 && PoissonTail(episodes, chance_episodes) <= kChance;
  const double mu = 1 + 2 * n1 * n2 / n;
  const double var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1));
  v.runs_z = var > 0 ? (static_cast<double>(runs.size()) - mu) / std::sqrt(var) : 0;
  if (!real) return v;
  v.flaps = episodes;
  v.flapping = alternates;
  v.came_back = clean_since_episode;
  if (episodes >= 2) v.period_s = static_cast<double>(window_ns) / 1e9 / episodes;
  return v;
}

FlapVerdict FlapHistory::Judge(std::uint64_t key, FlapVerdict window, std::int64_t start_ns,
                               std::int64_t end_ns) {
  const auto it = came_back_.find(key);
  // Down, back up by the previous window's end, down again in this one.
  if (it != came_back_.end() && it->second == start_ns && window.flaps > 0) window.flapping = true;
  if (window.came_back) {
    came_back_[key] = end_ns;
  } else if (it != came_back_.end()) {
    came_back_.erase(it);
  }
  return window;
}

void FlapHistory::Prune(std::int64_t start_ns) {
  std::erase_if(came_back_, [start_ns](const auto& entry) { return entry.second < start_ns; });
}

std::size_t FlapRecorder::memory_bytes() const {
  std::size_t bytes = trails_.capacity() * sizeof(Trail);
  for (const Trail& t : trails_) bytes += t.capacity() * sizeof(std::uint32_t);
  for (const PortTally& p : ports_) bytes += p.memory_bytes();
  return bytes;
}

}  // namespace hostmesh::analysis
