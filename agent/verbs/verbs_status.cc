#include "agent/verbs/verbs_status.h"

#include <cstring>

namespace hostmesh::agent::verbs {

VerbsError ErrnoError(const std::string& what, int errnum) {
  return VerbsError{errnum, what + ": " + std::strerror(errnum)};
}

}  // namespace hostmesh::agent::verbs
