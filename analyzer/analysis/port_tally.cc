#include "analyzer/analysis/port_tally.h"

#include <algorithm>

namespace hostmesh::analysis {

bool PortTally::Add(std::uint16_t port, bool failed) {
  auto it = ports_.find(port);
  if (it == ports_.end()) {
    if (ports_.size() >= max_ports_) {
      ++untallied_probes_;
      return false;
    }
    it = ports_.emplace(port, PortOutcome{port, 0, 0}).first;
  }
  ++it->second.probes;
  if (failed) ++it->second.failures;
  return true;
}

std::vector<PortOutcome> PortTally::Outcomes() const {
  std::vector<PortOutcome> out;
  out.reserve(ports_.size());
  for (const auto& [port, outcome] : ports_) out.push_back(outcome);
  std::sort(out.begin(), out.end(),
            [](const PortOutcome& a, const PortOutcome& b) { return a.port < b.port; });
  return out;
}

std::size_t PortTally::memory_bytes() const {
  return sizeof(*this) + ports_.size() * (sizeof(PortOutcome) + 2 * sizeof(void*)) +
         ports_.bucket_count() * sizeof(void*);
}

}  // namespace hostmesh::analysis
