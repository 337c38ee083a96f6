#pragma once

// Flapping: a NIC or link that goes down and up loses its probes in bursts,
// a lossy one loses them evenly. Counts cannot tell the two apart, the order
// of the outcomes can. For the components worth watching (the culprits of
// the last judged window) a window keeps each probe's outcome and send time.
// At the close, its down episodes are the failure runs longer than a steady
// loss at the window's rate would make (together as unlikely as a z <= -4);
// a flap alternates them with clean phases (success runs as unlikely): two
// episodes with one between in the window, or one that came back before the
// window's end and one in the next (FlapHistory: flaps slower than a
// window). A loss that starts or ends in the window, or a lossy component
// that goes down, has no clean phase between its long failure runs. The
// episodes give the flap count and period; a runs test's z is kept as evidence.
// Memory is per watched component only, so a fleet-sized window pays nothing
// for it while nothing is blamed.

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "analyzer/analysis/flat_map.h"
#include "analyzer/analysis/port_tally.h"
#include "analyzer/analysis/types.h"
#include "analyzer/analysis/window_report.h"

namespace hostmesh::analysis {

struct FlapVerdict {
  bool flapping = false;
  std::uint32_t flaps = 0;  // down episodes seen in the window, 0 unless beyond chance
  double period_s = 0;      // window / flaps, 0 with fewer than two
  double runs_z = 0;        // the runs test's z (very negative: clustered)
  bool came_back = false;   // a clean phase followed the last down episode
};

// Which components to watch: RNIC keys (host * kMaxNics + nic) and links.
struct FlapWatchList {
  FlatMap rnics{16};
  FlatMap links{16};
  std::size_t size = 0;  // slots: rnics, then links
  void Clear() {
    rnics = FlatMap{16};
    links = FlatMap{16};
    size = 0;
  }
  void AddRnic(HostId host, NicId nic) {
    if (rnics.Insert(std::uint64_t{host} * kMaxNics + nic, static_cast<std::uint32_t>(size))
            .second) {
      ++size;
    }
  }
  void AddLink(LinkId link) {
    if (links.Insert(link, static_cast<std::uint32_t>(size)).second) ++size;
  }
};

// Route churn: how many of a component's failed probes were sent while a
// link was down (inside one of its down episodes: between the last success
// before a run of its failures and the first success after).
// Outside the episodes, only probes that crossed no other watched link
// count: a failure on a path that also crossed another named link (a lossy
// downlink under the detour's spine) is as much that link's, and counted as
// the detour's own it made a flap's shadow look like a fault of its own.
struct ChurnOverlap {
  std::uint32_t failures = 0;
  std::uint32_t inside = 0;         // failures sent inside a down episode
  std::uint32_t inside_probes = 0;  // probes (failed or not) sent inside one
  std::uint32_t outside = 0;        // failures sent outside every episode, on no other watched link
  std::uint32_t outside_probes = 0;  // probes (failed or not) sent so
};

// Whether a link's failures beside down links are their churn: all but
// chance of them sent inside the down episodes. Churn loses between episodes
// at the background rate; a fault of its own loses there too, at its rate. So
// it is a fault of its own when its failures outside the episodes are beyond
// chance at the background (own_alpha) and lose at least min_excess above it
// (the excess the evidence test is indifferent at); or it is churn outright
// when at least inside_share of its failures fell inside. A share alone
// miscounts both ways: a dozen failures of churn beside two of the
// background is 86% inside, and a neighbour of its own losing 0.5% beside a
// flap whose episodes cover most of its probes may be 90% inside.
struct ChurnTest {
  double background = 0;  // the window's ambient path loss
  double min_excess = 0;
  double own_alpha = 0;
  double inside_share = 1;
};
bool IsChurn(const ChurnOverlap& o, const ChurnTest& t);

// Outcomes of one window for the watched components.
class FlapRecorder {
 public:
  FlapRecorder(const FlapWatchList& watch, std::int64_t window_start_ns)
      : watch_(watch), start_ns_(window_start_ns), trails_(watch.size), ports_(watch.size) {}

  void Record(const ProbeRecord& r, std::span<const LinkId> middle);
  // Watch these from now on (a window judged meanwhile named new culprits):
  // the trails of components watched before and still watched carry over.
  void Rewatch(const FlapWatchList& watch);
  std::optional<FlapVerdict> JudgeRnic(HostId host, NicId nic, std::int64_t window_ns) const;
  std::optional<FlapVerdict> JudgeLink(LinkId link, std::int64_t window_ns) const;
  bool Watches(LinkId link) const { return watch_.links.Find(link) != nullptr; }
  // Failures of `failing` sent inside a down episode of any of `down` (the
  // watched ones), and its probes sent inside and outside them; nullopt unless
  // `failing` and at least one of `down` are watched.
  std::optional<ChurnOverlap> FailuresWhileDown(LinkId failing, std::span<const LinkId> down) const;
  // Outcomes through a watched link per source port, by port; empty when not watched.
  std::vector<PortOutcome> LinkPorts(LinkId link) const;
  // Probes through watched links whose port was past PortTally's cap.
  std::uint64_t untallied_port_probes() const;
  std::size_t memory_bytes() const;

 private:
  // (ms since the window start) << 2 | shared << 1 | failed; shared: the
  // probe crossed another watched link too.
  using Trail = std::vector<std::uint32_t>;
  static constexpr std::uint32_t kShared = 2;
  static std::uint32_t Entry(std::uint32_t ms, bool failed) { return ms << 2 | (failed ? 1u : 0u); }
  static std::uint32_t Ms(std::uint32_t entry) { return entry >> 2; }
  static bool Failed(std::uint32_t entry) { return (entry & 1) != 0; }
  std::optional<FlapVerdict> Judge(const Trail& trail, std::int64_t window_ns) const;
  static Trail ByTime(const Trail& trail);

  FlapWatchList watch_;  // a copy: the list changes after each judged window
  std::int64_t start_ns_;
  std::vector<Trail> trails_;
  // By slot, links only: (probes, failures) per source port, capped.
  std::vector<PortTally> ports_;
};

// The down episodes and runs test of one window's outcomes, already in time
// order (true: failed).
FlapVerdict JudgeOutcomes(std::span<const bool> failed, std::int64_t window_ns);

// Flaps slower than a window: a component whose down episode came back by the
// end of one window and that goes down again in the next is flapping too.
// Remembers, per watched component, the window it came back in.
class FlapHistory {
 public:
  static std::uint64_t LinkKey(LinkId link) { return (std::uint64_t{1} << 63) | link; }
  static std::uint64_t RnicKey(HostId host, NicId nic) {
    return std::uint64_t{host} * kMaxNics + nic;
  }
  // `window`: the component's verdict for the window [start_ns, end_ns).
  FlapVerdict Judge(std::uint64_t key, FlapVerdict window, std::int64_t start_ns,
                    std::int64_t end_ns);
  // Forgets the components that came back before the window starting at start_ns.
  void Prune(std::int64_t start_ns);
  std::size_t size() const { return came_back_.size(); }

 private:
  std::unordered_map<std::uint64_t, std::int64_t> came_back_;  // -> end of that window
};

}  // namespace hostmesh::analysis
