#pragma once

// What each method concluded in one judged window, as component keys.
//
// Ours (the analyzer): the loss inference's culprits (links, RNICs) and blamed
// switches, the latency inference's culprits, the hosts flagged for processing
// delay. Top: the first culprit, or its switch when the switch is blamed.
//
// The paper's (Hostmesh, APNet'24): RNICs over the 10% timeout rule
// (paper_anomalous), and by Algorithm 1 the links with the most votes, for loss
// and for latency. Algorithm 1 ranks; as a verdict it names the links with the
// maximum vote count (ties included). It does not name switches or hosts.
// Top: an anomalous RNIC first (the paper classifies RNICs first), else the
// most-voted link.
//
// Both: a NIC's own link is named as its RNIC, as the truth names it.

#include <cstdint>
#include <vector>

#include "analyzer/analysis/window_report.h"
#include "sim/components.h"

namespace hostmesh::sim {

struct Verdict {
  std::vector<ComponentKey> named;     // no duplicates
  std::vector<double> confidence;      // parallel to named: the method's own (ours only)
  std::vector<double> raw_confidence;  // parallel to named: the raw score it was calibrated from
  std::vector<double> added_ns;        // parallel to named: a latency verdict's added delay (ours)
  ComponentKey top_loss = 0;           // 0: nothing named for loss
};

// host_of[analyzer host id] = the fleet host.
Verdict OurVerdict(const analysis::WindowReport& report, const Fleet& fleet,
                   const std::vector<std::uint32_t>& host_of);
Verdict PaperVerdict(const analysis::WindowReport& report, const Fleet& fleet,
                     const std::vector<std::uint32_t>& host_of);

}  // namespace hostmesh::sim
