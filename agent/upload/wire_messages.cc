#include "agent/upload/wire_messages.h"

#include <algorithm>

namespace hostmesh::agent::upload {

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

v1::PathReport ToProto(const tracer::PathReport& r) {
  v1::PathReport out;
  ToProto(r, &out);
  return out;
}

void ToProto(const tracer::PathReport& r, v1::PathReport* out) {
  out->Clear();
  out->set_src_ip(r.tuple.src.ToString());
  out->set_dst_ip(r.tuple.dst.ToString());
  out->set_src_port(r.tuple.sport);
  out->set_dst_port(r.tuple.dport);
  out->set_protocol(r.tuple.protocol);
  for (const tracer::Hop& h : r.hops) {
    v1::Hop* hop = out->add_hops();
    hop->set_ttl(static_cast<std::uint32_t>(h.ttl));
    // Silent: empty, "unknown, not a drop" (ingest.proto).
    if (!h.address.IsZero()) hop->set_address(h.address.ToString());
    hop->set_rtt_ns(h.rtt.count());
  }
  out->set_reached_destination(r.reached_destination);
  out->set_time_ns(r.time.time_since_epoch().count());
  out->set_changed(r.changed);
  out->set_src_nic(r.src_nic);
  out->set_dst_nic(r.dst_nic);
}

}  // namespace hostmesh::agent::upload
