#pragma once

// SIGTERM and SIGINT as a readable fd: blocked before any thread starts, so
// every thread inherits the mask and the signals arrive only through the fd
// the process's loop watches (a clean shutdown path, no async handler).

#include <signal.h>
#include <sys/signalfd.h>

namespace hostmesh {

// The signalfd, or -1 with errno set. Call from main before starting threads.
inline int BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  if (pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr) != 0) return -1;
  return signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK);
}

}  // namespace hostmesh
