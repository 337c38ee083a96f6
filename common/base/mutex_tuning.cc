#include "common/base/mutex_tuning.h"

#include <absl/synchronization/mutex.h>

namespace hostmesh {

void DisableMutexDeadlockDetection() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace hostmesh
