#pragma once

namespace hostmesh {

// Turns Abseil's mutex deadlock detection off; call from main before any
// thread starts. Debian builds gRPC and Abseil without NDEBUG, so every
// absl::Mutex gRPC locks or destroys updates a global lock-order graph: 4% of
// the analyzer's ingest CPU at 10,000 streams, and in the agent a graph's
// worth of memory (about 90 KB) and instructions on every gRPC lock. It is a
// debugging aid.
void DisableMutexDeadlockDetection();

}  // namespace hostmesh
