#pragma once

// TraceIo over kernel sockets: a UDP socket per traced 5-tuple for sending,
// one raw ICMP socket for every reply.
//
// Why a raw ICMP socket (CAP_NET_RAW) rather than IP_RECVERR + MSG_ERRQUEUE on
// the sending socket (unprivileged, SO_EE_OFFENDER names the hop):
// - The agent already owns a UDP socket bound to each (NIC address, pool
//   port) it probes from. A tracer socket on the same 5-tuple needs
//   SO_REUSEADDR/SO_REUSEPORT on both, and the kernel then delivers each ICMP
//   error to whichever socket its lookup picks: with IP_RECVERR the tracer's
//   replies would land in the agent's error queue (mixed with its TX
//   timestamps) about half the time. A raw ICMP socket gets a copy of every
//   ICMP error however the probe was sent (UDP socket, verbs UD with a GRH hop
//   limit), so one socket serves all traces.
// - It sees the whole quoted datagram (header and payload), where the error
//   queue hands back only our own payload and the offender address; the
//   quoted 5-tuple and UDP length are what matches a reply (probe_tag.h).
// - The agent needs privileges anyway (binding to devices, hardware
//   timestamps), so CAP_NET_RAW costs nothing extra there. `hostmeshctl
//   trace` needs it too (traceroute(8) -U gets by with IP_RECVERR because
//   nothing else owns its 5-tuple; ours usually is the agent's).
// The raw socket is narrowed with ICMP_FILTER to Time Exceeded and
// Destination Unreachable, so echo traffic never wakes it.
//
// The send socket is bound to (src, sport) on `netdev` (SO_BINDTODEVICE: a
// sibling NIC's address is local, so without it the probe would take lo;
// DESIGN 4.3) with SO_REUSEADDR, and sends unconnected: a connected UDP
// socket turns a Port Unreachable into a sticky ECONNREFUSED. Binding fails
// with EADDRINUSE while another socket without SO_REUSEADDR holds (src, sport).

#include <memory>
#include <string>

#include "common/base/clock.h"
#include "common/base/unique_fd.h"
#include "tracer/trace_io.h"

namespace hostmesh::tracer {

class KernelTraceIo final : public TraceIo {
 public:
  // Null with `error` set when the raw ICMP socket cannot be opened (no CAP_NET_RAW).
  static std::unique_ptr<KernelTraceIo> Create(const Clock& clock, std::string& error);

  std::string Open(const FiveTuple& tuple, const std::string& netdev) override;
  std::string Send(int ttl, std::span<const std::uint8_t> payload) override;
  bool Receive(MonoTime deadline, std::vector<std::uint8_t>& packet,
               MonoTime& received_at) override;
  void SleepUntil(MonoTime until) override;

 private:
  KernelTraceIo(const Clock& clock, UniqueFd icmp) : clock_(clock), icmp_(std::move(icmp)) {}

  const Clock& clock_;
  UniqueFd icmp_;
  UniqueFd udp_;
  FiveTuple tuple_;
};

}  // namespace hostmesh::tracer
