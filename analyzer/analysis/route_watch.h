#pragma once

// Links routing has withdrawn. A link that goes down carries nothing once the
// routing protocol reconverges (BFD and BGP: about a second), so its probes
// stop failing and loss evidence has nothing to hold it by, while the fabric
// runs one spine short for as long as it lasts. Traceroutes still show it:
// a rail switch hashes every new flow over its up-links, so each 5-tuple's
// first trace (and a retrace that found its path changed) is a fresh ECMP
// draw there. A link none of N such draws picked, on a switch with k
// up-links, is one routing does not use, with a chance of error of at most
// (1 - 1/k)^N. Only the first switch of a path is tested: a switch above it
// sees flows already sorted by the hash below (hash polarization), so its
// draws are not independent.
//
// A trace that stops right after the rail switch may have gone up any of the
// switch's links (a gray one eats its traces; elsewhere a silent spine and a
// loss further on do the same). So the test is: of the n draws since the
// link was last seen in use, at most c (those cut short there) can have
// picked it; a link in use, drawn with chance 1/k, shows c or fewer with
// chance at most exp(-n KL(c/n || 1/k)) (Chernoff; (1 - 1/k)^n when c = 0).
// A gray link's share of traces is all cut short, so it is never taken for
// one routing avoids.
// Pure; not thread-safe.

#include <cstdint>
#include <span>
#include <vector>

#include "analyzer/analysis/types.h"

namespace hostmesh::analysis {

struct WithdrawnLink {
  LinkId link = kUnknown;
  double p_value = 0;  // chance that the draws since it was last used missed a link in use
};

class RouteWatch {
 public:
  // Precondition: 0 < false_alarm < 1 (per link and decision).
  explicit RouteWatch(double false_alarm) : false_alarm_(false_alarm) {}

  // One traced path (PathRecord::links and candidates). `fresh`: the
  // 5-tuple's first path, or one different from the path it had.
  void AddTrace(const PathRecord& path, bool fresh, const FabricMap& fabric);

  // The up-links routing does not use now, by link id.
  std::vector<WithdrawnLink> Withdrawn(const FabricMap& fabric) const {
    return Unused(fabric, false_alarm_);
  }
  // The same test at another chance of error (0 < alpha < 1).
  std::vector<WithdrawnLink> Unused(const FabricMap& fabric, double alpha) const;
  // By link id: 1 for the up-links the watch can judge (their switch has two
  // or more up-links and has made fresh draws), 0 for every other link.
  std::vector<char> Watched(const FabricMap& fabric) const;

 private:
  struct LinkState {
    std::uint64_t draws_at_use = 0;     // its switch's draws when it was last used
    std::uint64_t maybe_since_use = 0;  // draws since, cut short where it may be
  };
  void Grow(LinkId link, SwitchId sw);
  void Use(LinkId link, SwitchId sw);
  std::vector<std::uint32_t> UpLinks(const FabricMap& fabric) const;  // by switch

  double false_alarm_;
  std::vector<std::uint64_t> draws_;  // by switch: fresh draws, ever
  std::vector<LinkState> state_;      // by link
};

}  // namespace hostmesh::analysis
