// hostmesh-delayq: holds every packet of one NFQUEUE for a fixed delay, then accepts it.
// The testbed's `fabric fault add delay` runs one per link end, inside that end's namespace,
// behind an NFQUEUE rule with --queue-bypass on the interface's egress (postrouting).

#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "deploy/testbed/delayq/alarm.h"
#include "deploy/testbed/delayq/delay_line.h"
#include "deploy/testbed/delayq/nfqueue.h"

namespace hostmesh::delayq {
namespace {

struct Options {
  uint16_t queue = 0;
  double delay_ms = 0;
  uint32_t max_len = 1 << 16;
  int rcvbuf_bytes = 64 << 20;
};

// A closed descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {
    if (fd_ < 0) throw std::runtime_error(std::string("creating a descriptor: ") + strerror(errno));
  }
  ~Fd() { close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Termination arrives as a readable descriptor, so the loop never runs a handler mid-update.
Fd BlockTerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  // The parent reads our ready line and then closes the pipe.
  signal(SIGPIPE, SIG_IGN);
  return Fd(signalfd(-1, &set, SFD_CLOEXEC));
}

void Watch(int epoll, int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &ev) < 0) {
    throw std::runtime_error(std::string("epoll_ctl: ") + strerror(errno));
  }
}

int Run(const Options& opt) {
  // The default 50 us timer slack would be 5% of a 1 ms delay.
  prctl(PR_SET_TIMERSLACK, 1UL);
  Fd signals = BlockTerminationSignals();
  auto delay = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::milli>(opt.delay_ms));
  DelayLine line(delay);
  uint64_t packets = 0;
  Clock::time_point arrived;
  NfQueue queue(opt.queue, opt.max_len, opt.rcvbuf_bytes, [&](uint32_t id) {
    line.Push(id, arrived);
    ++packets;
  });
  Alarm alarm;
  Fd epoll(epoll_create1(EPOLL_CLOEXEC));
  Watch(epoll.get(), queue.fd());
  Watch(epoll.get(), alarm.fd());
  Watch(epoll.get(), signals.get());

  std::printf("ready queue=%u delay_ms=%g\n", opt.queue, opt.delay_ms);
  std::fflush(stdout);

  bool running = true;
  while (running) {
    epoll_event events[4];
    Clock::time_point slept = Clock::now();
    int n = epoll_wait(epoll.get(), events, 4, -1);
    if (n < 0 && errno != EINTR) throw std::runtime_error("epoll_wait failed");
    // Netlink gives no enqueue time, and a packet that woke us was queued one wake-up latency
    // ago; the alarm measures that latency on its own wake-ups. Without this, a 1 ms delay
    // came out 5-8% long here.
    arrived = std::max(slept, Clock::now() - alarm.typical_latency());
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == signals.get()) running = false;
      if (fd == queue.fd()) queue.Drain();
      if (fd == alarm.fd()) alarm.OnFired();
    }
    if (auto last = line.PopDue(Clock::now())) queue.AcceptUpTo(*last);
    alarm.Set(line.NextDeadline());
  }
  // Release what is held rather than let the unbind drop it.
  if (auto last = line.PopAll()) queue.AcceptUpTo(*last);
  std::fprintf(stderr,
               "hostmesh-delayq: queue %u: %llu packets delayed, at most %zu held, %llu overruns, "
               "released %.1f us late on average\n",
               opt.queue, static_cast<unsigned long long>(packets), line.max_held(),
               static_cast<unsigned long long>(queue.overruns()),
               std::chrono::duration<double, std::micro>(line.mean_lateness()).count());
  return 0;
}

}  // namespace
}  // namespace hostmesh::delayq

int main(int argc, char** argv) {
  hostmesh::delayq::Options opt;
  CLI::App app{"Hold every packet of an NFQUEUE for a fixed delay, then accept it."};
  app.add_option("--queue", opt.queue, "NFQUEUE number to bind")->required();
  app.add_option("--delay-ms", opt.delay_ms, "delay added to every packet (ms)")
      ->required()
      ->check(CLI::Range(0.0, 60000.0));
  app.add_option("--max-len", opt.max_len, "kernel queue length (packets held at most)")
      ->check(CLI::Range(1u, 1u << 22));
  CLI11_PARSE(app, argc, argv);
  try {
    return hostmesh::delayq::Run(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hostmesh-delayq: %s\n", e.what());
    return 1;
  }
}
