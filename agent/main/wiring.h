#pragma once

// The pure half of the agent process: config -> the core's, transports' and
// uploader's option structs, the transport choice, and the core's plain
// structs -> hostmesh.v1 messages. No I/O, so it is unit-tested as is.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/config/agent_config.h"
#include "agent/core/probe_transport.h"
#include "agent/core/scheduler.h"
#include "agent/core/tracker.h"
#include "agent/udp/udp_transport.h"
#include "agent/upload/uploader.h"
#include "agent/verbs/verbs_transport.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::agent::app {

struct CoreOptions {
  SchedulerOptions scheduler;
  TrackerOptions tracker;
};

CoreOptions CoreOptionsFrom(const AgentConfig& config);
udp::UdpTransportOptions UdpOptionsFrom(const AgentConfig& config);
verbs::VerbsTransportOptions VerbsOptionsFrom(const AgentConfig& config);
upload::UploaderOptions UploaderOptionsFrom(const AgentConfig& config);

// The transport the process runs and why. One per process, not per NIC: every
// NIC probes every other, and a verbs UD packet (RoCEv2 BTH after the UDP
// header) cannot be read by a kernel UDP socket, nor the other way round, so
// a NIC pair with mixed transports could never exchange a probe.
struct TransportChoice {
  Transport transport = Transport::kUdp;  // kVerbs or kUdp, never kAuto
  std::vector<std::string> reasons;       // one line per NIC, for the log
};

// `auto`: verbs when every NIC names an RDMA device that `has_device` finds,
// else UDP (then each NIC needs a netdev). Explicit choices are kept.
TransportChoice ChooseTransport(const AgentConfig& config,
                                const std::function<bool(std::string_view)>& has_device);

// Checks what the config parser cannot: options the core and the chosen
// transport accept. Returns problems in the config's key terms ("nics[2].netdev: ...").
std::vector<std::string> CheckWiring(const AgentConfig& config, Transport chosen);

// One line for `--check-config`.
std::string ConfigSummary(const AgentConfig& config);

v1::TimestampSource ToProto(TimestampSource source);
v1::Transport ToProto(Transport transport);
v1::ProbeResult ToProto(const ProbeResult& result);
// Into `out`, every field set (a message the batch's arena already holds).
void ToProto(const ProbeResult& result, v1::ProbeResult& out);

struct HelloInputs {
  std::uint64_t boot_id = 0;
  Transport transport = Transport::kUdp;
  std::vector<NicCapabilities> capabilities;  // per NIC, from OpenNic; may be short
  std::string agent_version;
  std::int64_t start_time_ns = 0;
  bool traceroute = false;  // the tracer thread runs (raw ICMP socket open)
};
v1::AgentHello BuildHello(const AgentConfig& config, const HelloInputs& inputs);

// One-way network latency (3)-(2) and end-host processing delay
// ((4)-(1)) - ((3)-(2)) in seconds; false when a timestamp is missing.
bool NetworkLatencySeconds(const ProbeResult& result, double* seconds);
bool ProcessingDelaySeconds(const ProbeResult& result, double* seconds);

}  // namespace hostmesh::agent::app
