#pragma once

// The probe loop's hot system calls without glibc's cancellation wrappers.
// glibc makes sendto, recvmmsg, epoll_wait and ppoll cancellation points: in
// a process with threads every call switches the calling thread to
// asynchronous cancellation and back, two atomic read-modify-writes and
// about 30 instructions a call, three calls a probe. Nothing in hostmesh
// cancels a thread (pthread_cancel is never called), so these go to the
// kernel through syscall(2). Same arguments, results and errno as the
// wrappers.

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <ctime>

namespace hostmesh {

inline ssize_t PlainSendto(int fd, const void* buf, size_t len, int flags, const sockaddr* to,
                           socklen_t to_len) {
  return ::syscall(SYS_sendto, fd, buf, len, flags, to, to_len);
}

// No timeout: the callers read with MSG_DONTWAIT.
inline int PlainRecvmmsg(int fd, mmsghdr* messages, unsigned count, int flags) {
  return static_cast<int>(::syscall(SYS_recvmmsg, fd, messages, count, flags, nullptr));
}

// epoll_pwait with no signal mask is epoll_wait, and exists on every
// architecture (epoll_wait does not on arm64).
inline int PlainEpollWait(int epfd, epoll_event* events, int max_events, int timeout_ms) {
  return static_cast<int>(
      ::syscall(SYS_epoll_pwait, epfd, events, max_events, timeout_ms, nullptr, _NSIG / 8));
}

// Waits at most `wait` (not negative).
inline int PlainPpoll(pollfd* fds, nfds_t count, std::chrono::nanoseconds wait) {
  timespec timeout{};
  timeout.tv_sec = static_cast<time_t>(wait.count() / 1'000'000'000);
  timeout.tv_nsec = static_cast<long>(wait.count() % 1'000'000'000);
  return static_cast<int>(::syscall(SYS_ppoll, fds, count, &timeout, nullptr, _NSIG / 8));
}

}  // namespace hostmesh
