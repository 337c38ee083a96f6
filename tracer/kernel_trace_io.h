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
// A send socket is bound to (src, sport) on `netdev` (SO_BINDTODEVICE: a
// sibling NIC's address is local, so without it the probe would take lo;
// DESIGN 4.3) with SO_REUSEADDR, and connected to the destination being traced.
// Connected, it is the best match in the kernel's lookup of an ICMP error's
// quoted 5-tuple, so the errors our traces draw land on it (and are dropped:
// no IP_RECVERR) instead of in the agent's probe socket for (src, sport),
// where each one was an error-queue message to read, a wake-up of the probe
// loop, a count of ICMP errors the probes never drew and a failed next send.
// A Port or Host Unreachable leaves a connected socket a sticky error that
// fails its next send once: Send tries again. Binding fails with EADDRINUSE
// while another socket without SO_REUSEADDR holds (src, sport).
// The sockets are kept across traces, keyed by (src, sport) (a source address
// is one NIC's: a different netdev reopens it) and connected afresh when the
// destination changes (the continuous tracer runs one trace per source NIC at
// a time): a pool of 16 ports on 8 NICs is 128 sockets, opened once per port
// rotation instead of once per trace. The least recently used go beyond
// kMaxSendSockets. The TTL rides on each sendmsg (IP_TTL control message), not a setsockopt per
// probe. A socket whose send fails is closed, so the next trace opens it afresh. Every probe
// carries the traffic class (IP TOS byte) it was created with: a traceroute must take the probes'
// queue (the lossless RoCE class), or it follows another class's path and queue and reports them
// instead.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/base/clock.h"
#include "common/base/unique_fd.h"
#include "tracer/trace_io.h"

namespace hostmesh::tracer {

class KernelTraceIo final : public TraceIo {
 public:
  // Null with `error` set when the raw ICMP socket cannot be opened (no
  // CAP_NET_RAW). `tos`: the IP TOS byte of every probe (the agent's probe
  // traffic_class).
  static std::unique_ptr<KernelTraceIo> Create(const Clock& clock, std::uint8_t tos,
                                               std::string& error);

  std::string Open(const FiveTuple& tuple, const std::string& netdev) override;
  std::string Send(const FiveTuple& tuple, int ttl, std::span<const std::uint8_t> payload) override;
  bool Receive(MonoTime deadline, std::vector<std::uint8_t>& packet,
               MonoTime& received_at) override;
  void SleepUntil(MonoTime until) override;

 private:
  KernelTraceIo(const Clock& clock, std::uint8_t tos, UniqueFd icmp)
      : clock_(clock), tos_(tos), icmp_(std::move(icmp)) {}

  // Sockets past this are closed, least recently used first (2 x 8 NICs x 16 ports).
  static constexpr std::size_t kMaxSendSockets = 256;
  using SocketKey = std::pair<std::uint32_t, std::uint16_t>;  // src, sport
  struct SendSocket {
    UniqueFd fd;
    std::string netdev;
    Ipv4 peer;  // connected to (peer, peer_port); 0 when not yet
    std::uint16_t peer_port = 0;
    std::uint64_t last_use = 0;
  };

  const Clock& clock_;
  int tos_ = 0;
  UniqueFd icmp_;
  std::vector<std::uint8_t> buffer_;  // Receive's, reused
  std::map<SocketKey, SendSocket> sockets_;
  std::uint64_t uses_ = 0;
};

}  // namespace hostmesh::tracer
