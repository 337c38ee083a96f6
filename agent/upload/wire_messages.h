#pragma once

// What the agent puts on the wire: its plain structs as hostmesh.v1 messages
// (probe results, path reports, the Hello of a boot). Pure; the agent and the
// simulator's hosts both call it, so they upload the same bytes.

#include <cstdint>
#include <string>
#include <vector>

#include "agent/config/agent_config.h"
#include "agent/core/probe_transport.h"
#include "agent/core/probe_types.h"
#include "hostmesh/v1/ingest.pb.h"
#include "proto/wire/packed_results.h"
#include "tracer/path_report.h"

namespace hostmesh::agent::upload {

v1::TimestampSource ToProto(TimestampSource source);
v1::Transport ToProto(Transport transport);
v1::ProbeResult ToProto(const ProbeResult& result);
// Into `out`, every field set (a message the batch's arena already holds).
void ToProto(const ProbeResult& result, v1::ProbeResult& out);
// Its values for UploadBatch.packed_results (wire::AppendRecord).
wire::ResultRecord ToRecord(const ProbeResult& result);

v1::PathReport ToProto(const tracer::PathReport& report);
// The same into `out`, which is cleared first: a message reused batch after
// batch keeps its hops and strings (no allocation per report).
void ToProto(const tracer::PathReport& report, v1::PathReport* out);

struct HelloInputs {
  std::uint64_t boot_id = 0;
  Transport transport = Transport::kUdp;
  std::vector<NicCapabilities> capabilities;  // per NIC, from OpenNic; may be short
  std::string agent_version;
  std::int64_t start_time_ns = 0;
  bool traceroute = false;  // the tracer thread runs (raw ICMP socket open)
};
v1::AgentHello BuildHello(const AgentConfig& config, const HelloInputs& inputs);

}  // namespace hostmesh::agent::upload
