#include "deploy/testbed/delayq/alarm.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace hostmesh::delayq {
namespace {

using std::chrono::microseconds;

// Wake-ups in a busy VM take tens to hundreds of microseconds, up to 20% of a 1 ms delay.
// Never arm earlier than this, so a latency spike cannot turn into long spinning.
constexpr Clock::duration kMaxLead = microseconds(200);

[[noreturn]] void Fail(const char* what) {
  throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

Alarm::Alarm() : fd_(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) {
  if (fd_ < 0) Fail("timerfd_create");
}

Alarm::~Alarm() {
  close(fd_);
}

void Alarm::Set(std::optional<Clock::time_point> deadline) {
  if (deadline == deadline_) return;  // already armed for it: save the syscall
  deadline_ = deadline;
  itimerspec spec{};
  if (deadline) {
    armed_for_ = *deadline - lead_;
    set_at_ = Clock::now();
    // steady_clock is CLOCK_MONOTONIC on Linux.
    auto ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(armed_for_.time_since_epoch()).count();
    ns = std::max<decltype(ns)>(ns, 1);  // zero would disarm; a past time fires at once
    spec.it_value.tv_sec = ns / 1'000'000'000;
    spec.it_value.tv_nsec = ns % 1'000'000'000;
  }
  if (timerfd_settime(fd_, TFD_TIMER_ABSTIME, &spec, nullptr) < 0) Fail("timerfd_settime");
}

void Alarm::OnFired() {
  uint64_t expirations;
  if (read(fd_, &expirations, sizeof(expirations)) < 0) return;  // spurious: not fired
  Clock::time_point now = Clock::now();
  // Wake-up latency here is bimodal (tens or hundreds of microseconds). The lead tracks its
  // upper envelope (rise fast, decay slowly): waking early costs a short spin, waking late
  // costs accuracy. A time already past when armed fired at once: no sleep to learn from.
  if (armed_for_ > set_at_) {
    Clock::duration latency = std::clamp<Clock::duration>(now - armed_for_, {}, kMaxLead);
    lead_ += latency > lead_ ? (latency - lead_) / 2 : (latency - lead_) / 32;
    typical_ += (latency - typical_) / 16;
  }
  if (deadline_) {
    while (now < *deadline_ && *deadline_ - now <= 2 * kMaxLead) now = Clock::now();
  }
  deadline_.reset();  // fired: the next Set must re-arm even for the same deadline
}

}  // namespace hostmesh::delayq
