// The entry point of hostmesh-agent-verbs.so (verbs_plugin.h): the only code
// that links libibverbs into the agent's process, and only once loaded.
#include "agent/main/verbs_plugin.h"

#include "agent/verbs/device_discovery.h"

namespace hostmesh::agent::app {
namespace {

VerbsPluginTransport MakeVerbsTransport(const Clock& clock,
                                        const verbs::VerbsTransportOptions& options) {
  auto transport = std::make_unique<verbs::VerbsTransport>(clock, options);
  verbs::VerbsTransport* raw = transport.get();
  VerbsPluginTransport out;
  out.stats = [raw](NicId nic) {
    const verbs::VerbsNicStats& s = raw->nic_stats(nic);
    const verbs::VerbsClockState clock_state = raw->clock_state(nic);
    return TransportNicStats{s.receive_errors,
                             static_cast<double>(clock_state.error_bound_ns) * 1e-9};
  };
  out.transport = std::move(transport);
  return out;
}

const VerbsPlugin kPlugin{kVerbsPluginVersion, &verbs::HasRdmaDevice, &MakeVerbsTransport};

}  // namespace
}  // namespace hostmesh::agent::app

extern "C" __attribute__((visibility("default"))) const hostmesh::agent::app::VerbsPlugin*
hostmesh_agent_verbs_plugin() {
  return &hostmesh::agent::app::kPlugin;
}
