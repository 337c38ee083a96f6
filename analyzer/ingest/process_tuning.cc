#include "analyzer/ingest/process_tuning.h"

#include <sys/resource.h>

#include "common/base/mutex_tuning.h"

namespace hostmesh::analyzer::ingest {

ProcessTuning TuneProcess() {
  ProcessTuning out;
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
    if (files.rlim_cur < files.rlim_max) {
      rlimit raised = files;
      raised.rlim_cur = files.rlim_max;
      if (setrlimit(RLIMIT_NOFILE, &raised) == 0) files = raised;
    }
    out.open_files = files.rlim_cur;
  }
  DisableMutexDeadlockDetection();
  return out;
}

}  // namespace hostmesh::analyzer::ingest
