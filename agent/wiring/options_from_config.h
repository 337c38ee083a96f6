#pragma once

// Config -> the core's, transports' and uploader's option structs, and the
// transport choice: what the agent process and the simulator's hosts build
// their parts from. No I/O, so it is unit-tested as is.

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

namespace hostmesh::agent::wiring {

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

}  // namespace hostmesh::agent::wiring
