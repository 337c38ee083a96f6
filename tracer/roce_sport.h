#pragma once

// The UDP source port a RoCEv2 NIC puts on a packet whose address handle has
// flow label `flow_label`, so that a kernel UDP trace follows the same ECMP
// path as the verbs probe. The formula is rdma-core's
// ibv_flow_label_to_udp_sport, kept in one place (agent/verbs/flow_label.h,
// header-only constexpr: no link against libibverbs needed).

#include <cstdint>

#include "agent/verbs/flow_label.h"
#include "tracer/ipv4.h"

namespace hostmesh::tracer {

constexpr std::uint16_t RoceSportForFlowLabel(std::uint32_t flow_label) {
  return agent::verbs::UdpSportForFlowLabel(flow_label & agent::verbs::kFlowLabelMask);
}

// The 5-tuple of a RoCEv2 probe from `src` to `dst` with `flow_label`.
constexpr FiveTuple RoceTuple(Ipv4 src, Ipv4 dst, std::uint32_t flow_label) {
  FiveTuple t;
  t.src = src;
  t.dst = dst;
  t.sport = RoceSportForFlowLabel(flow_label);
  t.dport = kRoceV2Port;
  return t;
}

}  // namespace hostmesh::tracer
