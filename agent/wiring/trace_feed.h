#pragma once

// What the probe loop tells the path tracer, in one place for the agent
// process and the simulator's hosts: the 5-tuples to trace once a source-port
// pool has rotated, and a lost probe's 5-tuple to trace again soon. Pure.

#include <cstdint>
#include <optional>
#include <vector>

#include "agent/config/agent_config.h"
#include "agent/core/probe_types.h"
#include "agent/core/scheduler.h"
#include "tracer/continuous_tracer.h"

namespace hostmesh::agent::wiring {

class TraceFeed {
 public:
  // `config` outlives the feed.
  explicit TraceFeed(const AgentConfig& config) : config_(config) {}

  // Every (source NIC, destination NIC, pool port) of the scheduler's pools
  // when a pool has rotated since the last hand-over, and on the first call;
  // nullopt when nothing changed (nothing to copy, which is almost always).
  std::optional<std::vector<tracer::TraceTarget>> TargetsIfRotated(const Scheduler& scheduler);
  // Whether anything was handed over since construction or Reset.
  bool handed_any() const { return !handed_.empty(); }
  // The next TargetsIfRotated hands every pool over again (a NIC reopened
  // on new source ports, a new boot's scheduler).
  void Reset() { handed_.clear(); }

  // The 5-tuple of a lost probe, which the tracer brings forward; nullopt
  // for a delivered probe or a NIC without an IPv4 address.
  std::optional<tracer::FiveTuple> RetraceFor(const ProbeResult& result) const;

 private:
  const AgentConfig& config_;
  std::vector<std::uint64_t> handed_;  // each pool's generation when last handed over
  std::uint64_t handed_changes_ = 0;   // Scheduler::pool_changes() when last compared
};

}  // namespace hostmesh::agent::wiring
