// Process-wide settings an analyzer of a large fleet needs, applied by main
// before any thread starts.
#pragma once

#include <cstdint>

namespace hostmesh::analyzer::ingest {

struct ProcessTuning {
  std::uint64_t open_files = 0;  // the soft limit now in force
};

// - Open files: every agent holds a connection (10,000 hosts: 10,000
//   descriptors, beside the store's files), so the soft limit is raised to
//   the hard one (systemd's default soft limit is 1,024).
// - Abseil's mutex deadlock detection, off (common/base/mutex_tuning.h).
ProcessTuning TuneProcess();

}  // namespace hostmesh::analyzer::ingest
