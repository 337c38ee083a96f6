#pragma once

// ProbeTransport over kernel UDP sockets, for hosts without RDMA and the testbed.
//
// Per local NIC: one receive socket bound to (NIC address, dst_port) on the
// NIC's netdev, and one send socket per source port the scheduler uses,
// bound to (NIC address, source port) on the netdev, so the probe's 5-tuple
// carries the pool port. Send sockets are opened on the first send from a
// port and closed once unused for `idle_close` and no TX stamp of theirs is
// still outstanding: the transport follows the port pool's rotation without
// being told about it, and a stamp of the old port is never lost to an early
// close.
//
// Timestamps (SO_TIMESTAMPING, all CLOCK_REALTIME ns):
//   (1) app send: read just before sendmsg
//   (2) NIC send: TX stamp from the send socket's error queue, matched by OPT_ID
//   (3) NIC receive: the SCM_TIMESTAMPING stamp of the received datagram
//   (4) app receive: read right after recvmsg
// Hardware stamps are used where the device has them switched on (or lets us
// switch them on); else kernel software stamps (veth, lo). A hardware stamp
// further than `hardware_max_skew` from the kernel's view of the same moment
// is taken for a PHC not kept on CLOCK_REALTIME: the software stamp (RX) or
// none (TX) is used instead, and counted.
//
// One epoll fd covers every socket (readable data and EPOLLERR, which signals
// error-queue data); it is ReadyFd(). Each ready socket is drained with one
// recvmmsg (RecvBatch) into buffers allocated once. Errors on the data path
// are return values and counters, never exceptions. Not thread-safe: one I/O
// loop owns it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/core/payload_pool.h"
#include "agent/core/probe_transport.h"
#include "agent/udp/nic_socket.h"
#include "agent/udp/recv_batch.h"
#include "agent/udp/tx_stamp_fifo.h"
#include "common/base/clock.h"
#include "common/base/unique_fd.h"
#include "common/config/value_types.h"
#include "common/net/roce.h"

namespace hostmesh::agent::udp {

struct UdpNicConfig {
  std::string name;    // for logs
  std::string netdev;  // SO_BINDTODEVICE; empty: address only (not for same-host meshes)
  config::IpAddress ip;
};

struct UdpTransportOptions {
  std::vector<UdpNicConfig> nics;             // NicId = index
  std::uint16_t dst_port = net::kRoceV2Port;  // the receive sockets' port
  int ttl = 64;
  int traffic_class = 0;  // IP TOS byte / IPv6 traffic class
  bool try_hardware_timestamps = true;
  bool enable_hardware_timestamps = true;  // may switch the device's stamping on
  std::chrono::nanoseconds hardware_max_skew = std::chrono::milliseconds{10};
  std::chrono::nanoseconds idle_close = std::chrono::seconds{30};
  // A TX stamp not back by then never comes (error queue overflow, device skip).
  std::chrono::nanoseconds tx_stamp_timeout = std::chrono::seconds{1};
  std::size_t max_send_sockets_per_nic = 1024;
  std::size_t max_payload_bytes = 65535;  // receive buffer; larger datagrams are truncated
  // Datagrams read per recvmmsg call (receive and error queues alike).
  std::size_t receive_batch = 16;
};

// Per NIC; the agent's /metrics reads these.
struct UdpNicCounters {
  std::uint64_t sends = 0;             // accepted by the kernel
  std::uint64_t send_retry_later = 0;  // EAGAIN/ENOBUFS, or no socket could be opened
  std::uint64_t send_errors = 0;       // other sendmsg errors
  std::uint64_t socket_errors = 0;     // opening a send socket failed
  std::uint64_t sockets_opened = 0;
  std::uint64_t sockets_closed = 0;
  std::uint64_t received = 0;
  std::uint64_t receive_errors = 0;
  std::uint64_t truncated = 0;            // datagram larger than max_payload_bytes
  std::uint64_t rx_without_stamp = 0;     // (3) missing
  std::uint64_t tx_stamps = 0;            // matched to a probe
  std::uint64_t tx_stamps_lost = 0;       // never came within tx_stamp_timeout
  std::uint64_t tx_stamps_unmatched = 0;  // came for no pending send
  // A stamp off the kernel clock by more than hardware_max_skew, or a TX
  // stamp from before its send: a PHC not on CLOCK_REALTIME, or ids out of step.
  std::uint64_t implausible_stamps = 0;
  std::uint64_t icmp_errors = 0;     // ICMP errors for our sends (port unreachable, ...)
  std::uint64_t other_errqueue = 0;  // local errors and messages we do not understand
};

class UdpTransport final : public ProbeTransport {
 public:
  // `clock` gives (1) and (4) (realtime) and the idle bookkeeping (monotonic);
  // for timestamps comparable with the kernel's it must be a SystemClock.
  UdpTransport(const Clock& clock, UdpTransportOptions options);
  ~UdpTransport() override;
  UdpTransport(const UdpTransport&) = delete;
  UdpTransport& operator=(const UdpTransport&) = delete;

  OpenResult OpenNic(NicId nic) override;
  SendResult Send(const ProbeOrder& order, std::span<const std::uint8_t> payload) override;
  std::size_t Poll(std::vector<TransportEvent>& out, std::size_t max_events) override;
  void Reclaim(std::vector<TransportEvent>& handled) override { payloads_.Reclaim(handled); }
  int ReadyFd() const override { return epoll_.get(); }

  const UdpNicCounters& counters(NicId nic) const { return nics_.at(nic).counters; }
  TimestampMode timestamp_mode(NicId nic) const { return nics_.at(nic).mode; }
  std::size_t send_sockets(NicId nic) const { return nics_.at(nic).senders.size(); }
  // Closes idle send sockets and expires lost TX stamps now (Poll does it
  // about once a second by itself).
  void Sweep();

 private:
  struct Sender {
    UniqueFd fd;
    TxStampFifo fifo;
    MonoTime last_used{};
  };
  struct Nic {
    UdpNicConfig config;
    bool open = false;
    TimestampMode mode = TimestampMode::kSoftware;
    UniqueFd receiver;
    // Send sockets by source port: a pool's ports are few (16 by default, and
    // the next rotation's), so a scan of the packed port list, eight at a
    // time, beats hashing and touches a cache line or two.
    std::vector<std::uint16_t> sender_ports;
    std::vector<Sender> senders;  // senders[i] is bound to sender_ports[i]
    UdpNicCounters counters;
    SocketAddress probe_address;  // config.ip at options_.dst_port: every probe's, made once
  };

  // The index of `port`'s send socket on `nic`, or -1.
  static std::ptrdiff_t FindSender(const Nic& nic, std::uint16_t port);
  Sender* SenderFor(NicId nic, std::uint16_t port, MonoTime now, int& error);
  bool Watch(int fd, std::uint64_t key, std::uint32_t events);
  void CloseSender(NicId nic, std::size_t index);
  std::size_t DrainReceive(NicId nic, std::vector<TransportEvent>& out, std::size_t budget);
  std::size_t DrainErrQueue(NicId nic, Sender& sender, std::vector<TransportEvent>& out,
                            std::size_t budget);
  // One error-queue message: a TX stamp becomes an event, the rest counters.
  bool OnErrQueueMessage(Nic& nic, NicId id, Sender& sender, const msghdr& msg,
                         TransportEvent& event);
  Timestamp PickReceiveStamp(Nic& nic, std::int64_t software_ns, std::int64_t hardware_ns);
  std::int64_t RealtimeNs() const;

  const Clock& clock_;
  UdpTransportOptions options_;
  std::vector<Nic> nics_;
  UniqueFd epoll_;
  RecvBatch rx_batch_;   // receive queues: whole datagrams
  RecvBatch err_batch_;  // error queues: stamps and ICMP errors, quotes cut short
  MonoTime next_sweep_{};
  // Received payloads' buffers, reused (a turn at 1000 probes/s on 8 NICs
  // receives 8; a burst past 64 allocates).
  PayloadPool payloads_{64};
};

}  // namespace hostmesh::agent::udp
