#pragma once

// Flapping: a NIC or link that goes down and up loses its probes in bursts,
// a lossy one loses them evenly. Counts cannot tell the two apart, the order
// of the outcomes can. For the components worth watching (the culprits of
// the last judged window) a window keeps each probe's outcome and send time.
// At the close, from its first failure to its last (a fault that starts or
// ends in the window is one change, not a flap), a Wald-Wolfowitz runs test
// says whether the failures cluster, and the runs say whether they alternate
// as a flap does: down episodes (failure runs longer than a steady loss at
// the same rate would make) with a clean phase (a success run as unlikely)
// between two of them. The episodes give the flap count and period.
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
  std::uint32_t flaps = 0;  // down episodes seen in the window (flap_watch.cc)
  double period_s = 0;      // window / flaps, 0 with fewer than two
  double runs_z = 0;        // the runs test's z (very negative: clustered)
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
struct ChurnOverlap {
  std::uint32_t failures = 0;
  std::uint32_t inside = 0;
};

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
  // nullopt unless both links are watched.
  std::optional<ChurnOverlap> FailuresWhileDown(LinkId failing, LinkId down) const;
  // Outcomes through a watched link per source port, by port; empty when not watched.
  std::vector<PortOutcome> LinkPorts(LinkId link) const;
  // Probes through watched links whose port was past PortTally's cap.
  std::uint64_t untallied_port_probes() const;
  std::size_t memory_bytes() const;

 private:
  // (ms since the window start) << 1 | failed
  using Trail = std::vector<std::uint32_t>;
  std::optional<FlapVerdict> Judge(const Trail& trail, std::int64_t window_ns) const;
  static Trail ByTime(const Trail& trail);

  FlapWatchList watch_;  // a copy: the list changes after each judged window
  std::int64_t start_ns_;
  std::vector<Trail> trails_;
  // By slot, links only: (probes, failures) per source port, capped.
  std::vector<PortTally> ports_;
};

// The runs test and down episodes of outcomes already in time order (true: failed).
FlapVerdict JudgeOutcomes(std::span<const bool> failed, std::int64_t window_ns);

}  // namespace hostmesh::analysis
