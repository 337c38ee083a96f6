#pragma once

// Names the calling thread (at most 15 characters, the kernel's limit), so
// top -H, /proc/PID/task/*/comm and the overhead bench tell threads apart.

#include <pthread.h>

namespace hostmesh {

inline void SetThreadName(const char* name) {
  (void)pthread_setname_np(pthread_self(), name);
}

}  // namespace hostmesh
