#pragma once

// Traceroute of a 5-tuple: send the probe with TTL k, wait up to
// probe_timeout for its reply, go on with k+1. What is already known is not
// waited for one hop at a time, or not probed at all:
// - first_hop set: TTL 1 is not probed; hop 1 is that address.
// - switch_hops known: TTLs up to it go out back to back and their replies
//   are awaited together (one wait, not one per hop), then judged by the
//   rules below in TTL order as if sent one at a time (hops past an end are
//   dropped).
// - known_hops given and every switch answered from its known address (the
//   swallowing destination is then where it was: a switch added after the
//   last one would need new cabling to the destination NIC): the destination
//   is inferred at switch_hops + 1 without a probe.
//
// Stop rules:
// - Port Unreachable from the destination address: reached (kDestination).
// - Another Destination Unreachable, from anyone: the path ends there (kUnreachable).
// - A silent hop is recorded as unknown and the trace goes on; a late reply
//   to it, seen while waiting for a later TTL, still fills it in.
//   max_silent_run silent hops in a row end the trace (kSilentLimit).
// - destination_swallows (the destination is a local NIC whose receiver
//   consumes the probe, so nobody answers the probe that reaches it): when TTL
//   k is silent right after TTL k-1 answered Time Exceeded, and either
//   switch_hops == k-1 (known path length: decided at once) or TTLs
//   k..k+max_silent_run-1 all stay silent (unknown or changed length), then hop k is the
//   destination (kInferredDestination, reached_destination = true) and the
//   silent hops after it are dropped. A switch silent from rate limiting
//   looks the same, which is why a known switch_hops is preferred: without it
//   an inference can be early by the silent tail of the path. With it, a
//   silent run that ends before hop switch_hops+1 (all on the known path)
//   infers nothing and ends the trace at the silent limit.
// - The probe to a swallowing destination at the known distance waits only
//   swallowed_wait_factor x the slowest RTT so far + swallowed_wait_slack: the
//   only reply that can come is a Time Exceeded from a switch added to the
//   path, about as fast as the hop before it.
// - max_ttl reached: kOutOfTtl.

#include <cstdint>
#include <memory>
#include <vector>

#include "common/base/clock.h"
#include "tracer/trace_io.h"
#include "tracer/trace_types.h"

namespace hostmesh::tracer {

// Several traces under way at once over one TraceIo, each by the rules
// above: their probes go out as each trace's rules allow and one wait on the
// ICMP socket serves them all (a reply goes to the trace of the 5-tuple it
// quotes), so a thread is no longer held by one trace's waits. At most one
// trace per 5-tuple at a time. A reply quoting no trace under way counts as
// foreign in each of them, as it would in a trace alone. How many run at once
// is the caller's choice (the budgets of trace_budget.h in the agent).
class TraceRunner {
 public:
  TraceRunner(TraceIo& io, const Clock& clock);
  ~TraceRunner();
  TraceRunner(const TraceRunner&) = delete;
  TraceRunner& operator=(const TraceRunner&) = delete;

  // Opens the 5-tuple and sends the trace's first probes now.
  void Start(const TraceRequest& request);
  // Sends and receives until at least one trace has ended (its result
  // appended to `done`), none is under way, or `until` has come.
  void RunUntil(MonoTime until, std::vector<TraceResult>& done);
  std::size_t active() const;
  // When a trace under way next sends or stops waiting; max() when none.
  MonoTime NextDeadline() const;

 private:
  class Run;
  void Dispatch(MonoTime received_at);
  void Collect(std::vector<TraceResult>& done);

  TraceIo& io_;
  const Clock& clock_;
  std::vector<std::unique_ptr<Run>> runs_;
  std::vector<std::uint8_t> packet_;
};

// Runs one trace over `io`, timing with `clock`. Blocks for up to
// max_ttl * (probe_timeout + min_probe_interval).
TraceResult RunTrace(const TraceRequest& request, TraceIo& io, const Clock& clock);

// The blocking entry point for `hostmeshctl trace`: real sockets
// (kernel_trace_io.h, needs CAP_NET_RAW) and the system clock. A request
// with session 0 gets a random one. `tos`: the probes' IP TOS byte.
TraceResult TraceOnce(TraceRequest request, std::uint8_t tos);

}  // namespace hostmesh::tracer
