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
    TransportNicStats stats;
    stats.receive_errors = s.receive_errors;
    stats.clock_fit_error_seconds = static_cast<double>(clock_state.error_bound_ns) * 1e-9;
    if (const verbs::NicHealth* health = raw->nic_health(nic)) {
      RnicHealthStats h;
      // Within the series budget: the two kinds that end the NIC as one, and
      // the events that change nothing (GID changes, ...) only in the log.
      const auto count = [health](verbs::AsyncEventKind kind) {
        return health->counters().events[static_cast<std::size_t>(kind)];
      };
      h.async_events = {
          {"port_active", count(verbs::AsyncEventKind::kPortActive)},
          {"port_down", count(verbs::AsyncEventKind::kPortDown)},
          {"qp_fatal", count(verbs::AsyncEventKind::kQpFatal)},
          {"device_fatal",
           count(verbs::AsyncEventKind::kDeviceFatal) + count(verbs::AsyncEventKind::kCqError)},
      };
      h.qp_recoveries = health->counters().qp_recoveries;
      h.qp_recovery_failures = health->counters().qp_recovery_failures;
      h.reopens = health->counters().reopens;
      h.receive_queue_empty = s.receive_queue_empty;
      h.port_up = health->can_send();
      stats.rnic_health = std::move(h);
    }
    return stats;
  };
  out.force_qp_error = [raw](NicId nic, std::uint32_t qp) { return raw->ForceQpError(nic, qp); };
  out.force_device_error = [raw](NicId nic) { return raw->ForceDeviceError(nic); };
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
