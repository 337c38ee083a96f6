#pragma once

// The seam between the agent's pure core and the wire: kernel UDP sockets,
// verbs UD queue pairs, and an in-memory fake for tests and the simulator all
// implement this. Modeled on rdma-core's provider ops: a few calls, errors as
// return values, nothing blocks.
//
// A transport is built by its factory with the agent's NIC list (addresses,
// netdevs, RDMA devices); NicId is the index into that list. Timestamps are in
// the host's CLOCK_REALTIME timebase: a transport with NIC clocks maps them
// before reporting.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "agent/core/probe_types.h"

namespace hostmesh::agent {

struct NicCapabilities {
  TimestampSource send_timestamps = TimestampSource::kUser;  // best source of (2)
  TimestampSource recv_timestamps = TimestampSource::kUser;  // best source of (3)
};

// How a NIC varies the UDP source port of its probes (the port rotation the
// ECMP coverage depends on), for the agent's metrics.
enum class SourcePortRotation : std::uint8_t {
  kSocket,     // kernel UDP: a socket bound per port
  kFlowLabel,  // RoCEv2: the address handle's flow label sets the port
  kPerQp,      // RoCEv2 on a device that fixes the port per QP: a send QP per port
  kFixed,      // a single port: no rotation at all
};
inline constexpr std::size_t kSourcePortRotationCount = 4;
inline const char* SourcePortRotationName(SourcePortRotation rotation) {
  switch (rotation) {
    case SourcePortRotation::kSocket:
      return "socket";
    case SourcePortRotation::kFlowLabel:
      return "flow_label";
    case SourcePortRotation::kPerQp:
      return "per_qp";
    case SourcePortRotation::kFixed:
      break;
  }
  return "fixed";
}

struct OpenResult {
  bool ok = false;
  std::string error;  // why not, for the log, when !ok
  NicCapabilities capabilities;
  // Empty: the NIC sends from any source port the order names. Otherwise the
  // only ports it can send from (a device that fixes the RoCEv2 source port
  // per QP, with one QP per port): the port pool draws from these, so the
  // ports reported and traced are the ones on the wire.
  std::vector<std::uint16_t> source_ports;
  SourcePortRotation rotation = SourcePortRotation::kSocket;
};

enum class SendStatus : std::uint8_t {
  kOk,
  kRetryLater,  // queue full (EAGAIN, ENOBUFS, send queue): the probe was not sent
  kFailed,      // the NIC cannot send (down, gone): the probe was not sent
};

struct SendResult {
  SendStatus status = SendStatus::kFailed;
  int error = 0;       // errno or verbs status when not kOk
  Timestamp app_send;  // (1), read just before handing the probe over
  Timestamp nic_send;  // (2), when known at once
  // (2) will come later as a kSendTimestamp event (SO_TIMESTAMPING error
  // queue, send CQE) carrying the order's source NIC and sequence.
  bool nic_send_pending = false;
};

struct TransportEvent {
  enum class Kind : std::uint8_t {
    kReceived,       // a payload arrived on `nic`
    kSendTimestamp,  // (2) of the probe (`nic`, `sequence`)
    kSendFailed,     // the probe (`nic`, `sequence`) failed after being accepted
  };
  Kind kind = Kind::kReceived;
  NicId nic = 0;                      // receiving NIC, or sending NIC for the send kinds
  std::uint64_t sequence = 0;         // send kinds: the order's sequence
  Timestamp nic_time;                 // (3) for kReceived, (2) for kSendTimestamp
  Timestamp app_time;                 // (4) for kReceived
  int error = 0;                      // kSendFailed
  std::vector<std::uint8_t> payload;  // kReceived: the bytes as received
};

class ProbeTransport {
 public:
  virtual ~ProbeTransport() = default;

  // Opens one local NIC for sending and receiving. Call once per NIC before
  // sending from or to it.
  virtual OpenResult OpenNic(NicId nic) = 0;

  // Sends `payload` from order.src to order.dst with order's ports. Never blocks.
  virtual SendResult Send(const ProbeOrder& order, std::span<const std::uint8_t> payload) = 0;

  // Appends up to `max_events` ready events to `out` without blocking;
  // returns how many it appended.
  virtual std::size_t Poll(std::vector<TransportEvent>& out, std::size_t max_events) = 0;

  // The events of the last Poll, handled: a transport may take their payload
  // buffers back for the next receives (one allocation less per probe). On
  // return `handled` is empty.
  virtual void Reclaim(std::vector<TransportEvent>& handled) { handled.clear(); }

  // A file descriptor that becomes readable when Poll has something (epoll
  // fd of the sockets, completion channel); -1 if the transport has none and
  // the loop must rely on its own wake-ups.
  virtual int ReadyFd() const = 0;

  // The NICs the transport closed and opened again since the last call
  // (verbs: after a CQ or device error). Call OpenNic for each to learn what
  // changed: a device that fixes the source port per QP has new QPs, so new
  // source ports.
  virtual std::vector<NicId> TakeReopened() { return {}; }

  // The source ports `nic` will send from soon (its pool and the pool's next
  // rotation), so a transport can build what they need ahead, off the send
  // path (verbs: an address handle per destination and flow label).
  virtual void PrepareSourcePorts(NicId nic, std::span<const std::uint16_t> ports) {
    (void)nic;
    (void)ports;
  }
};

}  // namespace hostmesh::agent
