#include "agent/main/wiring.h"

#include <algorithm>
#include <stdexcept>

#include "agent/core/probe_codec.h"
#include "agent/verbs/queue_sizing.h"
#include "common/base/clock.h"

namespace hostmesh::agent::app {

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

v1::TimestampSource ToProto(TimestampSource source) {
  // Same numbers by design (probe_types.h); the switch keeps that honest.
  switch (source) {
    case TimestampSource::kUser:
      return v1::TIMESTAMP_SOURCE_USER;
    case TimestampSource::kKernel:
      return v1::TIMESTAMP_SOURCE_KERNEL;
    case TimestampSource::kHardware:
      return v1::TIMESTAMP_SOURCE_HARDWARE;
    case TimestampSource::kUnspecified:
      break;
  }
  return v1::TIMESTAMP_SOURCE_UNSPECIFIED;
}

v1::Transport ToProto(Transport transport) {
  switch (transport) {
    case Transport::kUdp:
      return v1::TRANSPORT_UDP;
    case Transport::kVerbs:
      return v1::TRANSPORT_VERBS;
    case Transport::kAuto:
      break;
  }
  return v1::TRANSPORT_UNSPECIFIED;
}

v1::ProbeResult ToProto(const ProbeResult& r) {
  v1::ProbeResult out;
  ToProto(r, out);
  return out;
}

void ToProto(const ProbeResult& r, v1::ProbeResult& out) {
  out.set_src_nic(r.src_nic);
  out.set_dst_nic(r.dst_nic);
  out.set_src_port(r.src_port);
  out.set_dst_port(r.dst_port);
  out.set_sequence(r.sequence);
  out.set_send_time_ns(r.send_time_ns);
  out.set_app_send_ns(r.app_send_ns);
  out.set_nic_send_ns(r.nic_send_ns);
  out.set_nic_recv_ns(r.nic_recv_ns);
  out.set_app_recv_ns(r.app_recv_ns);
  out.set_send_timestamp_source(ToProto(r.send_timestamp_source));
  out.set_recv_timestamp_source(ToProto(r.recv_timestamp_source));
  out.set_timeout(r.timeout);
  out.set_send_failed(r.send_failed);
  out.set_payload_bytes(r.payload_bytes);
  out.set_timestamp_error_ns(r.timestamp_error_ns);
}

v1::AgentHello BuildHello(const AgentConfig& config, const HelloInputs& in) {
  v1::AgentHello hello;
  hello.set_schema_version(v1::SCHEMA_VERSION_1);
  hello.set_agent_id(config.agent_id);
  hello.set_boot_id(in.boot_id);
  hello.set_host(config.host);
  hello.set_agent_version(in.agent_version);
  hello.set_start_time_ns(in.start_time_ns);
  TimestampSource best = TimestampSource::kUnspecified;
  for (std::size_t i = 0; i < config.nics.size(); ++i) {
    const NicConfig& nic = config.nics[i];
    v1::Nic* out = hello.add_nics();
    out->set_id(static_cast<std::uint32_t>(i));
    out->set_name(nic.name);
    out->set_rail(static_cast<std::uint32_t>(nic.rail));
    out->set_ip(nic.ip.ToString());
    out->set_netdev(nic.netdev);
    out->set_transport(ToProto(in.transport));
    if (in.transport == Transport::kVerbs) {
      out->set_rdma_device(nic.rdma_device);
      out->set_rdma_port(nic.rdma_port);
      out->set_gid_index(nic.gid_index);
    }
    if (i < in.capabilities.size()) {
      // The NIC delivers (2) and (3); the weaker of the two bounds the latency.
      const NicCapabilities& caps = in.capabilities[i];
      const TimestampSource source = std::min(caps.send_timestamps, caps.recv_timestamps);
      out->set_timestamp_source(ToProto(source));
      best = std::max(best, source);
    }
  }
  v1::Capabilities* caps = hello.mutable_capabilities();
  caps->set_best_timestamp_source(ToProto(best));
  caps->set_hardware_timestamps(best == TimestampSource::kHardware);
  caps->set_traceroute(in.traceroute);
  caps->add_transports(ToProto(in.transport));
  return hello;
}

bool NetworkLatencySeconds(const ProbeResult& r, double* seconds) {
  if (r.timeout || r.nic_send_ns == 0 || r.nic_recv_ns == 0) return false;
  *seconds = static_cast<double>(r.nic_recv_ns - r.nic_send_ns) * 1e-9;
  return true;
}

bool ProcessingDelaySeconds(const ProbeResult& r, double* seconds) {
  if (r.timeout || r.app_send_ns == 0 || r.nic_send_ns == 0 || r.nic_recv_ns == 0 ||
      r.app_recv_ns == 0) {
    return false;
  }
  const std::int64_t total = r.app_recv_ns - r.app_send_ns;
  const std::int64_t network = r.nic_recv_ns - r.nic_send_ns;
  *seconds = static_cast<double>(total - network) * 1e-9;
  return true;
}

}  // namespace hostmesh::agent::app
