#pragma once

// Which hosts shed load (agent self-protection) in which window, from the
// state their batches carry (UploadBatch.load_shedding). Pure: batches in by
// their creation time, windows out. Per host it keeps the state changes a
// window still to be judged may need: the last one at or before the oldest
// such window's start, and those after it (at most kMaxChangesPerHost, the
// oldest dropped first), so a flapping agent cannot make it grow.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/analysis/types.h"
#include "analyzer/analysis/window_report.h"

namespace hostmesh::analysis {

class SheddingBook {
 public:
  static constexpr std::size_t kMaxChangesPerHost = 64;

  // A batch of `host` created at `at_ns` said the agent probes at `fraction`
  // of its rate since `since_ns` because of `cause`, a CPU signal when `cpu`.
  void Note(HostId host, std::int64_t at_ns, double fraction, std::int64_t since_ns,
            const std::string& cause, bool cpu);

  // The hosts among `present` (sorted) that shed in [start_ns, end_ns);
  // forgets what no later window needs.
  std::vector<SheddingHost> ForWindow(std::int64_t start_ns, std::int64_t end_ns,
                                      const std::vector<HostId>& present);

 private:
  struct Change {
    std::int64_t at_ns = 0;
    double fraction = 1;
    std::int64_t since_ns = 0;
    std::string cause;
    bool cpu = false;
  };
  std::vector<std::vector<Change>> hosts_;  // by HostId, in batch order
};

}  // namespace hostmesh::analysis
