#pragma once

// The agent's probe loop in real time for the socket tests: Scheduler,
// Tracker and Prober over a UdpTransport, sleeping in epoll_wait on the
// transport's ReadyFd until the prober's next wake-up.

#include <sys/epoll.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "agent/core/prober.h"
#include "agent/udp/udp_transport.h"

namespace hostmesh::agent::udp::testing {

struct LoopRun {
  std::vector<ProbeResult> results;
  std::vector<std::string> open_errors;
  std::vector<NicCapabilities> capabilities;
  std::vector<UdpNicCounters> counters;
  std::vector<std::size_t> send_sockets;
  PairCounters totals;
};

// A probe is received when its answer is read within this of its send.
inline constexpr std::chrono::milliseconds kProbeTimeout{500};

// Probes for `probing`, then keeps polling for `drain` (longer than the
// timeout) so that every probe sent is decided. Only results of probes sent
// in the first `probing` are kept, all of which are decided by then.
inline LoopRun RunProbeLoop(UdpTransportOptions options, std::chrono::nanoseconds interval,
                            std::chrono::nanoseconds probing, std::chrono::nanoseconds drain,
                            std::uint64_t seed = 7) {
  using namespace std::chrono_literals;
  const SystemClock clock;
  const auto nics = static_cast<std::uint32_t>(options.nics.size());
  const std::uint16_t dst_port = options.dst_port;
  LoopRun run;
  UdpTransport transport(clock, std::move(options));
  for (NicId nic = 0; nic < nics; ++nic) {
    const OpenResult opened = transport.OpenNic(nic);
    if (!opened.ok) run.open_errors.push_back(opened.error);
    run.capabilities.push_back(opened.capabilities);
  }
  if (!run.open_errors.empty()) return run;

  const MonoTime start = clock.MonotonicNow();
  SchedulerOptions scheduler_options{nics, interval, 0.05, dst_port, PortPoolOptions{}};
  Scheduler scheduler(scheduler_options, start, seed);
  const auto timeout = kProbeTimeout;
  std::vector<ProbeResult> all;
  Tracker tracker({nics, timeout, Tracker::CapacityFor(interval, timeout)},
                  [&](const ProbeResult& r) { all.push_back(r); });
  Prober prober(scheduler, tracker, transport, clock, ProberOptions{50, 0xB007, 4096});

  const MonoTime stop_sending = start + probing;
  const MonoTime end = stop_sending + drain;
  std::vector<std::uint64_t> last_sequence_before_stop(nics, 0);
  for (;;) {
    const MonoTime now = clock.MonotonicNow();
    if (now >= end) break;
    const MonoTime wake = prober.RunOnce();
    if (now < stop_sending) {
      for (NicId nic = 0; nic < nics; ++nic) {
        last_sequence_before_stop[nic] = scheduler.orders(nic);
      }
    }
    const auto wait = std::clamp(wake, clock.MonotonicNow(), end) - clock.MonotonicNow();
    epoll_event event{};
    ::epoll_wait(transport.ReadyFd(), &event, 1,
                 static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(wait).count()));
  }
  for (const ProbeResult& r : all) {
    if (r.src_nic < nics && r.sequence <= last_sequence_before_stop[r.src_nic]) {
      run.results.push_back(r);
    }
  }
  for (NicId nic = 0; nic < nics; ++nic) {
    run.counters.push_back(transport.counters(nic));
    run.send_sockets.push_back(transport.send_sockets(nic));
  }
  run.totals = tracker.Totals();
  return run;
}

}  // namespace hostmesh::agent::udp::testing
