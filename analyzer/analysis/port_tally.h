#pragma once

// Probes per source port through one link in one window: what the ACL rule
// reads (diagnosis/diagnose.h: loss confined to some 5-tuples). A link carries
// a 5-tuple per port of every pool whose paths cross it, so at fleet scale
// only the 16-bit port space bounds the tally. It keeps at most `max_ports`
// ports, the first seen in the window (which says nothing about their loss,
// so the kept ports are a fair sample for the rule); probes of other ports
// are counted, not tallied, and the caller reports that it capped.

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analyzer/analysis/window_report.h"

namespace hostmesh::analysis {

class PortTally {
 public:
  // 1024 ports x (probes, failures) is about 40 KiB per watched link; the ACL
  // rule needs a few dozen ports with enough probes each.
  static constexpr std::size_t kMaxPorts = 1024;

  explicit PortTally(std::size_t max_ports = kMaxPorts) : max_ports_(max_ports) {}

  // False when `port` is new and the tally full: the probe is only counted.
  bool Add(std::uint16_t port, bool failed);

  // The tallied ports, by port.
  std::vector<PortOutcome> Outcomes() const;
  std::size_t ports() const { return ports_.size(); }
  // Probes of ports past the cap (0: every port was tallied).
  std::uint64_t untallied_probes() const { return untallied_probes_; }
  bool capped() const { return untallied_probes_ > 0; }
  std::size_t memory_bytes() const;

 private:
  std::size_t max_ports_;
  std::unordered_map<std::uint16_t, PortOutcome> ports_;
  std::uint64_t untallied_probes_ = 0;
};

}  // namespace hostmesh::analysis
