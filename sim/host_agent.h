#pragma once

// One simulated host's agent: the real agent core (Scheduler with its port
// pools, Tracker, Prober) on a SimTransport, and the real tracer
// (ContinuousTracer, RunTrace) on a SimTraceIo, configured by the agent's own
// wiring from an AgentConfig, run as the agent's event loop would in virtual
// time. What it produces (results, path reports, a Hello per boot) is what the
// agent would upload.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "agent/config/agent_config.h"
#include "agent/core/prober.h"
#include "agent/core/scheduler.h"
#include "agent/core/tracker.h"
#include "agent/wiring/trace_feed.h"
#include "agent/wiring/trace_plan.h"
#include "analyzer/analysis/types.h"
#include "analyzer/feed/feed_convert.h"
#include "hostmesh/v1/ingest.pb.h"
#include "sim/host_clock.h"
#include "sim/sim_trace_io.h"
#include "sim/sim_transport.h"
#include "tracer/continuous_tracer.h"

namespace hostmesh::sim {

// The agent's settings that matter to the simulation (agent/config defaults).
struct AgentSettings {
  agent::ProbeConfig probe;
  agent::PortPoolConfig ports;
  agent::TracerouteConfig traceroute;
};

// One wire path report as the analyzer's ingest converts it (feed_convert's
// ToPathRecord); `record.host` is set when the analyzer takes it in.
struct ConvertedPath {
  analyzer::app::PathConversion conversion = analyzer::app::PathConversion::kUnresolved;
  analysis::PathRecord record;
};

// What a host hands to the analyzer: as the agent uploads it.
struct HostOutput {
  std::vector<agent::ProbeResult> results;
  // The tracer's reports, kept only when `keep_paths` (for an upload
  // observer: the export, tests); the analyzer reads `wire_paths`.
  std::vector<tracer::PathReport> paths;
  bool keep_paths = true;
  // The reports as the agent puts them on the wire (its ToProto runs on the
  // host's thread, as it runs in the agent, not in the analyzer). Cleared
  // messages stay allocated for the next reports.
  google::protobuf::RepeatedPtrField<v1::PathReport> wire_paths;
  std::optional<v1::AgentHello> hello;  // after each (re)start
  std::uint64_t boot_id = 0;
  // The reports converted for the analyzer ahead of its ingest (the first
  // `converted_count` of `converted`; the rest are kept for their buffers).
  // Once converted, `wire_paths` may be handed on (PathConverter::Convert).
  std::vector<ConvertedPath> converted;
  std::size_t converted_count = 0;
  bool converted_ahead = false;
  void Clear() {
    results.clear();
    paths.clear();
    wire_paths.Clear();
    hello.reset();
    converted_count = 0;
    converted_ahead = false;
  }
};

class HostAgent {
 public:
  HostAgent(std::uint32_t host, const PacketModel& model, const AgentSettings& settings,
            IcmpModel icmp, std::int64_t wall_offset_ns, std::uint64_t seed);

  // Starts a new boot of the agent at `at` (a restart drops what was in flight).
  void Start(std::int64_t at_ns);
  void Stop();
  bool running() const { return prober_ != nullptr; }

  // Runs every event before end_ns; what the agent produced goes into `out`.
  void RunUntil(std::int64_t end_ns, HostOutput& out);

  std::uint64_t boots() const { return boots_; }
  std::size_t MemoryBytes() const;
  // The current boot's transport and tracker (null while stopped): what was
  // sent, delivered and decided, so a probe's fate can be accounted for.
  const SimTransport* transport() const { return transport_.get(); }
  const agent::Tracker* tracker() const { return tracker_.get(); }
  // Its probes that met each fault (indexed as the fault set's), over every boot.
  const std::vector<FaultExposure>& exposure() const { return exposure_; }

 private:
  // As the agent's HandTraceTargets (through the same TraceFeed).
  void RefreshTraceTargets();

  std::uint32_t host_;
  const PacketModel& model_;
  AgentSettings settings_;
  IcmpModel icmp_;
  std::int64_t wall_offset_ns_;
  std::uint64_t seed_;
  agent::AgentConfig config_;
  HostClock clock_;
  std::uint64_t boots_ = 0;
  std::uint64_t boot_id_ = 0;
  HostOutput* out_ = nullptr;  // during RunUntil

  std::unique_ptr<agent::Scheduler> scheduler_;
  std::unique_ptr<agent::Tracker> tracker_;
  std::unique_ptr<SimTransport> transport_;
  std::unique_ptr<agent::Prober> prober_;
  MonoTime prober_wake_{};

  std::unique_ptr<VirtualClock> trace_clock_;
  std::unique_ptr<SimTraceIo> trace_io_;
  std::unique_ptr<tracer::ContinuousTracer> tracer_;
  agent::wiring::TraceFeed trace_feed_{config_};  // after config_, which it reads
  agent::wiring::PathLengthHints hints_;
  MonoTime tracer_wake_{};
  std::optional<tracer::TraceResult> in_flight_;
  MonoTime in_flight_done_{};
  std::optional<v1::AgentHello> hello_;  // of the current boot, until handed out
  std::vector<FaultExposure> exposure_;  // empty when no fault has a loss limit
};

}  // namespace hostmesh::sim
