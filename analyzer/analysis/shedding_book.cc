#include "analyzer/analysis/shedding_book.h"

#include <algorithm>

namespace hostmesh::analysis {

void SheddingBook::Note(HostId host, std::int64_t at_ns, double fraction, std::int64_t since_ns,
                        const std::string& cause, bool cpu) {
  if (host >= hosts_.size()) hosts_.resize(std::size_t{host} + 1);
  std::vector<Change>& changes = hosts_[host];
  // Only changes are kept: every batch carries the state.
  if (!changes.empty() && changes.back().fraction == fraction &&
      changes.back().since_ns == since_ns) {
    return;
  }
  // Batches of one agent come in order; a late one (a resend) changes nothing past.
  if (!changes.empty() && at_ns < changes.back().at_ns) return;
  if (changes.size() == kMaxChangesPerHost) changes.erase(changes.begin());
  changes.push_back({at_ns, fraction, since_ns, cause, cpu});
}

std::vector<SheddingHost> SheddingBook::ForWindow(std::int64_t start_ns, std::int64_t end_ns,
                                                  const std::vector<HostId>& present) {
  std::vector<SheddingHost> out;
  for (const HostId host : present) {
    if (host >= hosts_.size() || hosts_[host].empty()) continue;
    std::vector<Change>& changes = hosts_[host];
    // The state in force at the window's start, and the changes within it.
    auto first = std::upper_bound(changes.begin(), changes.end(), start_ns,
                                  [](std::int64_t t, const Change& c) { return t < c.at_ns; });
    if (first != changes.begin()) --first;
    SheddingHost h;
    h.host = host;
    bool any = false;
    for (auto it = first; it != changes.end() && it->at_ns < end_ns; ++it) {
      any = true;
      h.lowest_fraction = std::min(h.lowest_fraction, it->fraction);
      h.rate_fraction = it->fraction;
      h.since_ns = it->since_ns;
      if (it->fraction < 1) {
        h.cause = it->cause;
        h.cpu = h.cpu || it->cpu;
      }
    }
    // Later windows start later: what precedes the state at this start is done with.
    changes.erase(changes.begin(), first);
    if (any && h.lowest_fraction < 1) out.push_back(std::move(h));
  }
  return out;
}

}  // namespace hostmesh::analysis
