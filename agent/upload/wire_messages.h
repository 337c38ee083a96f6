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
// Its values for UploadBatch.packed_results (wire::WriteRecord). Inline:
// once per result, where the copy can be folded away.
inline wire::ResultRecord ToRecord(const ProbeResult& r) {
  wire::ResultRecord e;
  e.src_nic = r.src_nic;
  e.dst_nic = r.dst_nic;
  e.src_port = r.src_port;
  e.dst_port = r.dst_port;
  e.sequence = r.sequence;
  e.send_time_ns = r.send_time_ns;
  e.stamps[0] = r.app_send_ns;
  e.stamps[1] = r.nic_send_ns;
  e.stamps[2] = r.nic_recv_ns;
  e.stamps[3] = r.app_recv_ns;
  // TimestampSource's numbers are v1::TimestampSource's (probe_types.h).
  e.send_source = static_cast<std::uint32_t>(r.send_timestamp_source);
  e.recv_source = static_cast<std::uint32_t>(r.recv_timestamp_source);
  e.timeout = r.timeout;
  e.send_failed = r.send_failed;
  e.payload_bytes = r.payload_bytes;
  e.timestamp_error_ns = r.timestamp_error_ns;
  return e;
}

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
