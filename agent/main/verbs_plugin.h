#pragma once

// The verbs transport is a module of its own, hostmesh-agent-verbs.so, loaded
// with dlopen only when verbs is chosen: under the UDP transport the agent
// maps neither libibverbs nor the libnl it pulls in, nor their providers.
// The module and the agent come from one build, so the interface is C++; the
// version refuses a module left from another build.
//
// Where it is looked for: beside the executable (the build tree), then in
// ../lib/hostmesh/ from it (installed: /usr/bin -> /usr/lib/hostmesh).

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "agent/core/probe_transport.h"
#include "agent/main/transport_stats.h"
#include "agent/verbs/verbs_transport.h"
#include "common/base/clock.h"

namespace hostmesh::agent::app {

inline constexpr int kVerbsPluginVersion = 3;  // 3: VerbsTransportOptions::on_nic_event
inline constexpr const char* kVerbsPluginFile = "hostmesh-agent-verbs.so";

struct VerbsPluginTransport {
  std::unique_ptr<ProbeTransport> transport;
  std::function<TransportNicStats(NicId)> stats;
  // VerbsTransport::ForceQpError, for the agent's debug hooks.
  std::function<std::string(NicId, std::uint32_t)> force_qp_error;
  // VerbsTransport::ForceDeviceError.
  std::function<std::string(NicId)> force_device_error;
};

struct VerbsPlugin {
  int version = 0;
  // libibverbs sees a device of that name (verbs::HasRdmaDevice).
  bool (*has_rdma_device)(std::string_view name) = nullptr;
  VerbsPluginTransport (*make_transport)(const Clock& clock,
                                         const verbs::VerbsTransportOptions& options) = nullptr;
};

// Loads the module once (later calls return the same); null with `error`
// naming every place tried when it cannot.
const VerbsPlugin* LoadVerbsPlugin(std::string* error);
// Loads the module from `file` (each call a dlopen; the module stays loaded).
const VerbsPlugin* LoadVerbsPluginFrom(const std::filesystem::path& file, std::string* error);

}  // namespace hostmesh::agent::app

// The module's one exported symbol.
extern "C" const hostmesh::agent::app::VerbsPlugin* hostmesh_agent_verbs_plugin();
