#pragma once

// The pure half of the agent's path tracer (agent/main/tracing_thread.h):
// config -> ContinuousConfig, the scheduler's port pools -> the 5-tuples to
// trace, and the path-length hints that let a swallowed probe end a trace at
// once. No I/O: unit-tested as is.

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agent/config/agent_config.h"
#include "tracer/continuous_tracer.h"
#include "tracer/path_report.h"

namespace hostmesh::agent::wiring {

// How long a trace waits for each hop's reply. The last probe of every agent
// trace reaches our own NIC, which swallows it: once the path length is known
// (after the first trace of a NIC pair) that probe waits about one round trip
// instead, so only silent hops and first traces pay this. Switch CPUs answer
// in well under 10 ms; a later reply still fills its hop while the next TTL
// waits.
inline constexpr std::chrono::milliseconds kTraceProbeTimeout{100};

// Traces falling due within this of the last batch wait for the next one, so
// one wake-up of the tracer thread starts several (a refresh is due every few
// minutes; a second late costs nothing). A due trace short of budget is not
// held: the first pass goes at the budget's rate.
inline constexpr std::chrono::seconds kTraceGather{1};

// The tracer thread's shortest wait when nothing is due: a trace that falls
// due within it starts on the next wake-up.
inline constexpr std::chrono::milliseconds kTracerMinWait{1};

tracer::ContinuousConfig ContinuousConfigFrom(const AgentConfig& config, std::uint32_t session);

// Every (source NIC, destination NIC, pool port) of the current pools, with
// `pool_ports[nic]` the ports of NIC nic's pool (agent/core/port_pool.h: one
// pool per source NIC). NICs without an IPv4 address are left out: the
// tracer speaks ICMPv4 only.
std::vector<tracer::TraceTarget> TraceTargetsFrom(
    const AgentConfig& config, const std::vector<std::vector<std::uint16_t>>& pool_ports);

// The 5-tuple a probe from NIC src to NIC dst on `src_port` uses, as
// TraceTargetsFrom lists it; nullopt for a NIC without an IPv4 address.
std::optional<tracer::FiveTuple> TraceTupleOf(const AgentConfig& config, std::uint32_t src,
                                              std::uint32_t dst, std::uint16_t src_port);

// Probes per second a full refresh of `targets` 5-tuples every refresh_period
// needs (4 per trace: rail switch, spine, rail switch, destination).
double RefreshProbesPerSecond(std::size_t targets, std::chrono::nanoseconds refresh_period);
// One log line on that load against the budget; `over_budget` when the
// budget (or the thread, at one probe timeout per trace) cannot keep up, so
// paths are refreshed less often than refresh_period.
std::string DescribeTraceLoad(const AgentConfig& config, std::size_t targets, bool* over_budget);

// Switch hops between two NICs, learned from traces that reached the
// destination. ECMP paths of one NIC pair are equal-cost, so one trace tells
// every port of the pair; before a pair is known, the last length seen for
// any pair is the guess (the same-host pairs of a rail fabric all climb to the
// same tier). A wrong guess only costs time: the engine then waits for
// max_silent_run silent probes before it infers the destination.
class PathLengthHints {
 public:
  void Learn(const tracer::TraceResult& result);
  // 0 when nothing was learned yet.
  int For(const tracer::FiveTuple& tuple) const;

 private:
  static std::uint64_t Key(const tracer::FiveTuple& t) {
    return std::uint64_t{t.src.value} << 32 | t.dst.value;
  }
  // By (source, destination) address; looked up before every trace.
  std::unordered_map<std::uint64_t, int> by_pair_;
  int last_ = 0;
};

}  // namespace hostmesh::agent::wiring
