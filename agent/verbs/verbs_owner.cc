#include "agent/verbs/verbs_owner.h"

#include <cstring>

#include "common/base/logging.h"

namespace hostmesh::agent::verbs {

void ReportReleaseFailure(const char* what, int errnum) {
  // A failed destroy leaks the object in the NIC until the process exits;
  // worth a warning, not worth aborting the agent.
  GetLogger("verbs")->warn("releasing {} failed: {}", what, std::strerror(errnum));
}

}  // namespace hostmesh::agent::verbs
