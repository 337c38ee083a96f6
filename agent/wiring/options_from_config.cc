#include "agent/wiring/options_from_config.h"

#include <algorithm>
#include <stdexcept>

#include "agent/core/probe_codec.h"
#include "agent/verbs/queue_sizing.h"
#include "common/base/clock.h"

namespace hostmesh::agent::wiring {

CoreOptions CoreOptionsFrom(const AgentConfig& config) {
  CoreOptions out;
  const auto nics = static_cast<std::uint32_t>(config.nics.size());
  out.scheduler.num_nics = nics;
  out.scheduler.interval = config.probe.interval;
  // One wake-up per round for all NICs (see Scheduler): the agent's CPU cost is
  // mostly cache-cold wake-ups, not the probes themselves.
  out.scheduler.coalesce_window = config.probe.interval;
  out.scheduler.dst_port = config.probe.dst_port;
  out.scheduler.ports.pool_size = config.ports.pool_size;
  out.scheduler.ports.rotation_period = config.ports.rotation_period;
  out.scheduler.ports.rotation_fraction = config.ports.rotation_fraction;
  out.scheduler.ports.min_port = config.ports.min;
  out.scheduler.ports.max_port = config.ports.max;
  out.tracker.num_nics = nics;
  out.tracker.timeout = config.probe.timeout;
  out.tracker.ring_capacity = Tracker::CapacityFor(config.probe.interval, config.probe.timeout);
  return out;
}

udp::UdpTransportOptions UdpOptionsFrom(const AgentConfig& config) {
  udp::UdpTransportOptions out;
  for (const NicConfig& nic : config.nics) out.nics.push_back({nic.name, nic.netdev, nic.ip});
  out.dst_port = config.probe.dst_port;
  out.ttl = config.probe.hop_limit;
  out.traffic_class = config.probe.traffic_class;
  // A send socket must outlive the probes it sent (replies are matched by the
  // tracker, but ICMP errors come back on the socket) even with a long timeout.
  out.idle_close = std::max<std::chrono::nanoseconds>(out.idle_close, config.probe.timeout * 2);
  // Every datagram the receive sockets expect comes from this agent: its own
  // probes and its tracer's last TTL (under 256 bytes). Anything longer is
  // not ours and is cut short (and counted) rather than given 64 KiB slots.
  out.max_payload_bytes = std::max<std::size_t>(256, config.probe.payload_bytes);
  return out;
}

verbs::VerbsTransportOptions VerbsOptionsFrom(const AgentConfig& config) {
  verbs::VerbsTransportOptions out;
  for (const NicConfig& nic : config.nics) {
    out.nics.push_back(
        {nic.name, nic.rdma_device, nic.rdma_port, nic.gid_index, nic.ip.ToString()});
  }
  out.hop_limit = config.probe.hop_limit;
  out.traffic_class = config.probe.traffic_class;
  out.service_level = config.probe.service_level;
  out.max_payload_bytes = std::max(out.max_payload_bytes, config.probe.payload_bytes);
  // Every (destination, pool port) of one rotation window needs its own AH.
  const std::size_t needed = config.nics.size() * config.ports.pool_size * 2;
  out.max_address_handles = std::max(out.max_address_handles, needed);
  // Enough receives posted for every peer's probes through a 200 ms poll stall.
  out.recv_queue_depth = verbs::RecvQueueDepthFor(config.probe.interval,
                                                  static_cast<std::uint32_t>(config.nics.size()),
                                                  std::chrono::milliseconds{200});
  // Per-QP devices: twice the pool, so rotation has ports to bring in.
  out.source_qps = std::max(out.source_qps, 2 * config.ports.pool_size);
  return out;
}

upload::UploaderOptions UploaderOptionsFrom(const AgentConfig& config) {
  upload::UploaderOptions out;
  out.analyzer_address = config.analyzer.address.ToString();
  out.security.insecure = config.analyzer.insecure;
  out.security.files = config.analyzer.tls;
  out.security.server_name = config.analyzer.server_name;
  out.engine.upload = config.upload;
  return out;
}

TransportChoice ChooseTransport(const AgentConfig& config,
                                const std::function<bool(std::string_view)>& has_device) {
  TransportChoice choice;
  if (config.transport != Transport::kAuto) {
    choice.transport = config.transport;
    for (const NicConfig& nic : config.nics) {
      choice.reasons.push_back(nic.name + ": " + std::string(TransportName(config.transport)) +
                               " (configured)");
    }
    return choice;
  }
  bool all_verbs = !config.nics.empty();
  for (const NicConfig& nic : config.nics) {
    std::string why;
    if (nic.rdma_device.empty()) {
      why = "no rdma_device configured";
    } else if (!has_device(nic.rdma_device)) {
      why = "RDMA device " + nic.rdma_device + " not found";
    } else {
      why = "RDMA device " + nic.rdma_device + " present";
      choice.reasons.push_back(nic.name + ": verbs possible (" + why + ")");
      continue;
    }
    all_verbs = false;
    choice.reasons.push_back(nic.name + ": needs udp (" + why + ")");
  }
  choice.transport = all_verbs ? Transport::kVerbs : Transport::kUdp;
  return choice;
}

std::vector<std::string> CheckWiring(const AgentConfig& config, Transport chosen) {
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < config.nics.size(); ++i) {
    const NicConfig& nic = config.nics[i];
    const std::string key = "nics[" + std::to_string(i) + "]";
    if (chosen == Transport::kUdp && nic.netdev.empty()) {
      problems.push_back(key + ".netdev: required when the udp transport is chosen (NIC " +
                         nic.name + " has no usable RDMA device)");
    }
    if (chosen == Transport::kVerbs && nic.rdma_device.empty()) {
      problems.push_back(key + ".rdma_device: required for the verbs transport");
    }
  }
  // The core validates its options in its constructors; build them once here
  // so a bad combination fails --check-config, not the running agent.
  try {
    const CoreOptions core = CoreOptionsFrom(config);
    const Scheduler scheduler(core.scheduler, MonoTime{}, 1);
    const Tracker tracker(core.tracker, [](const ProbeResult&) {});
  } catch (const std::invalid_argument& e) {
    problems.push_back(std::string("probe/ports: ") + e.what());
  }
  if (config.probe.payload_bytes < kProbeHeaderBytes) {
    problems.push_back("probe.payload_bytes: must be at least " +
                       std::to_string(kProbeHeaderBytes));
  }
  return problems;
}

std::string ConfigSummary(const AgentConfig& config) {
  const auto ms = [](std::chrono::nanoseconds d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + "ms";
  };
  return "config ok: host " + config.host + ", agent_id " + config.agent_id + ", " +
         std::to_string(config.nics.size()) + " NICs, transport " +
         std::string(TransportName(config.transport)) + ", interval " + ms(config.probe.interval) +
         ", timeout " + ms(config.probe.timeout) + ", analyzer " +
         config.analyzer.address.ToString() + ", metrics " + config.metrics.listen.ToString();
}

}  // namespace hostmesh::agent::wiring
