#pragma once

// What a traceroute of one 5-tuple is asked to do and what it found.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tracer/ipv4.h"

namespace hostmesh::tracer {

struct TraceRequest {
  FiveTuple tuple;
  std::string netdev;  // SO_BINDTODEVICE for the probes; empty: routed by source address only
  int max_ttl = 8;     // at most kMaxTtl
  // How long to wait for the reply to each probe before calling the hop silent.
  std::chrono::nanoseconds probe_timeout = std::chrono::milliseconds{500};
  // Gap between two probes of this trace: spreads the replies asked of the path.
  std::chrono::nanoseconds min_probe_interval{0};
  // Consecutive silent hops after which the trace gives up (the path may go on).
  int max_silent_run = 3;
  // The destination is a local receiver (the agent's own NIC) that consumes
  // probes instead of answering Port Unreachable. See trace_engine.h.
  bool destination_swallows = false;
  // Switches on the path when known (topology, or an earlier trace of the same
  // NIC pair); 0: unknown. Lets a swallowed probe end the trace at once.
  int switch_hops = 0;
  // With a known switch_hops, the probe to the swallowing destination waits
  // only factor x the slowest hop's RTT + slack (trace_engine.h), not
  // probe_timeout.
  int swallowed_wait_factor = 4;
  std::chrono::nanoseconds swallowed_wait_slack = std::chrono::milliseconds{2};
  // The source's first hop (the switch its NIC is cabled to: the same for
  // every 5-tuple of the source, no ECMP before it), confirmed by a recent
  // trace: TTL 1 is not probed, hop 1 is this address. Zero: probe it.
  Ipv4 first_hop;
  // The switch hops of this 5-tuple's last path (switch_hops of them, by
  // TTL) when known: if every switch answers as before, the destination
  // (swallowing) is where it was and is not probed (trace_engine.h).
  std::vector<Ipv4> known_hops;
  std::uint32_t generation = 0;  // distinguishes traces of one 5-tuple (probe_tag.h)
  std::uint32_t session = 0;     // distinguishes tracer processes
};

enum class HopStatus : std::uint8_t {
  kSilent,               // no reply within the timeout: unknown, not a drop
  kTimeExceeded,         // a switch on the way (its ingress address)
  kDestination,          // Port Unreachable from the destination
  kInferredDestination,  // swallowed by the destination's receiver (no reply by design)
  kUnreachable,          // Destination Unreachable (not port) from `address`: path ends
};

struct Hop {
  int ttl = 0;
  Ipv4 address;  // zero when silent
  HopStatus status = HopStatus::kSilent;
  std::chrono::nanoseconds rtt{0};  // zero when silent or inferred
  std::uint8_t icmp_code = 0;       // for kUnreachable
  bool answered() const {
    return status != HopStatus::kSilent && status != HopStatus::kInferredDestination;
  }
};

enum class TraceEnd : std::uint8_t {
  kDestination,          // Port Unreachable from the destination
  kInferredDestination,  // destination_swallows and the last switch answered
  kUnreachable,          // a hop refused to forward
  kSilentLimit,          // max_silent_run silent hops in a row
  kOutOfTtl,             // max_ttl reached without an end
  kError,                // could not send (see `error`)
};

const char* ToString(TraceEnd end);

struct TraceResult {
  FiveTuple tuple;
  std::vector<Hop> hops;  // by ttl, 1..n, silent hops included
  bool reached_destination = false;
  TraceEnd end = TraceEnd::kError;
  std::string error;
  int probes_sent = 0;
  // 2 when hop 1 was taken from the request's first_hop, not probed.
  int first_probed_ttl = 1;
  // ICMP seen while waiting that did not answer this trace.
  int foreign_replies = 0;
  int stale_replies = 0;
  int unparsable_replies = 0;

  int answered_hops() const;  // of those probed (hop 1 taken as known is not)
  int silent_hops() const;
  // The switch hops' addresses (zero for silent ones), without the destination.
  std::vector<Ipv4> SwitchHops() const;
};

}  // namespace hostmesh::tracer
