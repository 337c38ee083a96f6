#include "agent/udp/udp_transport.h"

#include <linux/errqueue.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "agent/udp/timestamping_cmsg.h"
#include "common/base/logging.h"
#include "common/base/plain_syscalls.h"
#include "common/base/sticky_socket_error.h"

namespace hostmesh::agent::udp {
namespace {

// epoll data: which socket became ready, without a lookup table of fds.
constexpr std::uint64_t kSenderBit = 1ULL << 63;
std::uint64_t ReceiverKey(NicId nic) {
  return std::uint64_t{nic} << 16;
}
std::uint64_t SenderKey(NicId nic, std::uint16_t port) {
  return kSenderBit | (std::uint64_t{nic} << 16) | port;
}

// Room for SCM_TIMESTAMPING plus IP_RECVERR with its offender address.
constexpr std::size_t kControlBytes = 512;
// ICMP errors quote our probe; we only need to know they came.
constexpr std::size_t kErrQuoteBytes = 64;
constexpr std::chrono::seconds kSweepPeriod{1};

bool IsRetryLater(int error) {
  return error == EAGAIN || error == EWOULDBLOCK || error == ENOBUFS || error == ENOMEM;
}

// The NIC itself is gone or has no address: the probe can never leave.
bool IsNicGone(int error) {
  return error == ENODEV || error == ENXIO || error == EADDRNOTAVAIL || error == ENETDOWN;
}

std::shared_ptr<spdlog::logger> Log() {
  return GetLogger("udp-transport");
}

}  // namespace

UdpTransport::UdpTransport(const Clock& clock, UdpTransportOptions options)
    : clock_(clock),
      options_(std::move(options)),
      nics_(options_.nics.size()),
      epoll_(::epoll_create1(EPOLL_CLOEXEC)),
      // One byte more than the largest payload, so that MSG_TRUNC tells a
      // datagram that did not fit.
      rx_batch_(std::max<std::size_t>(options_.receive_batch, 1), options_.max_payload_bytes + 1,
                kControlBytes),
      err_batch_(std::max<std::size_t>(options_.receive_batch, 1), kErrQuoteBytes, kControlBytes) {
  for (std::size_t i = 0; i < nics_.size(); ++i) {
    nics_[i].config = options_.nics[i];
    nics_[i].probe_address = MakeSocketAddress(nics_[i].config.ip, options_.dst_port);
  }
  if (!epoll_.valid()) Log()->error("epoll_create1: {}", std::strerror(errno));
}

UdpTransport::~UdpTransport() {
  // Sockets before the epoll fd: the reverse of creation order.
  for (Nic& nic : nics_) {
    nic.senders.clear();
    nic.receiver.Reset();
  }
}

std::int64_t UdpTransport::RealtimeNs() const {
  return clock_.RealtimeNow().time_since_epoch().count();
}

bool UdpTransport::Watch(int fd, std::uint64_t key, std::uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = key;
  return ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event) == 0;
}

OpenResult UdpTransport::OpenNic(NicId id) {
  OpenResult result;
  if (id >= nics_.size()) {
    result.error = "udp transport: no NIC " + std::to_string(id);
    return result;
  }
  Nic& nic = nics_[id];
  if (nic.open) {
    result.error = "udp transport: NIC " + nic.config.name + " already open";
    return result;
  }
  if (!epoll_.valid()) {
    result.error = "udp transport: no epoll fd";
    return result;
  }
  const std::string where =
      "NIC " + nic.config.name + " (" + nic.config.netdev + " " + AddressText(nic.config.ip) + ")";

  nic.mode = TimestampMode::kSoftware;
  if (options_.try_hardware_timestamps) {
    const HardwareTimestamping hw =
        ProbeHardwareTimestamping(nic.config.netdev, options_.enable_hardware_timestamps);
    if (hw.usable) {
      nic.mode = TimestampMode::kHardware;
    } else {
      Log()->info("{}: kernel software timestamps ({})", where, hw.reason);
    }
  }

  SocketSpec spec;
  spec.netdev = nic.config.netdev;
  spec.local = MakeSocketAddress(nic.config.ip, options_.dst_port);
  spec.timestamping = ReceiveTimestampingFlags(nic.mode);
  std::string error;
  int error_number = 0;
  UniqueFd receiver = OpenBoundSocket(spec, error, error_number);
  if (!receiver.valid() && nic.mode == TimestampMode::kHardware) {
    Log()->warn("{}: hardware receive stamps refused ({}); using software", where, error);
    nic.mode = TimestampMode::kSoftware;
    spec.timestamping = ReceiveTimestampingFlags(nic.mode);
    receiver = OpenBoundSocket(spec, error, error_number);
  }
  if (!receiver.valid()) {
    result.error = "udp transport: " + where + ": receive socket: " + error;
    return result;
  }
  if (!Watch(receiver.get(), ReceiverKey(id), EPOLLIN)) {
    result.error = "udp transport: " + where + ": epoll_ctl: " + std::strerror(errno);
    return result;
  }
  nic.receiver = std::move(receiver);
  nic.open = true;
  const TimestampSource source =
      nic.mode == TimestampMode::kHardware ? TimestampSource::kHardware : TimestampSource::kKernel;
  result.ok = true;
  result.capabilities.send_timestamps = source;
  result.capabilities.recv_timestamps = source;
  return result;
}

std::ptrdiff_t UdpTransport::FindSender(const Nic& nic, std::uint16_t port) {
  // Twice a probe (its send, its TX stamp): eight ports per compare.
  const std::uint16_t* ports = nic.sender_ports.data();
  const std::size_t n = nic.sender_ports.size();
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i wanted = _mm_set1_epi16(static_cast<short>(port));
  for (; i + 8 <= n; i += 8) {
    const __m128i eight = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ports + i));
    const int hits = _mm_movemask_epi8(_mm_cmpeq_epi16(eight, wanted));
    if (hits != 0) return static_cast<std::ptrdiff_t>(i) + __builtin_ctz(hits) / 2;
  }
#endif
  for (; i < n; ++i) {
    if (ports[i] == port) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}

UdpTransport::Sender* UdpTransport::SenderFor(NicId id, std::uint16_t port, MonoTime now,
                                              int& error) {
  Nic& nic = nics_[id];
  if (const std::ptrdiff_t index = FindSender(nic, port); index >= 0) {
    return &nic.senders[static_cast<std::size_t>(index)];
  }
  if (nic.senders.size() >= options_.max_send_sockets_per_nic) {
    error = EMFILE;
    return nullptr;
  }
  SocketSpec spec;
  spec.netdev = nic.config.netdev;
  spec.local = MakeSocketAddress(nic.config.ip, port);
  spec.timestamping = SendTimestampingFlags(nic.mode);
  spec.ttl = options_.ttl;
  spec.tclass = options_.traffic_class;
  spec.recv_errors = true;
  spec.reuse_address = true;
  spec.dont_fragment = true;
  std::string text;
  UniqueFd fd = OpenBoundSocket(spec, text, error);
  if (!fd.valid()) {
    ++nic.counters.socket_errors;
    Log()->warn("NIC {}: send socket for port {}: {}", nic.config.name, port, text);
    return nullptr;
  }
  // EPOLLERR is always reported: it is how the error queue (TX stamps) says "ready".
  if (!Watch(fd.get(), SenderKey(id, port), 0)) {
    error = errno;
    ++nic.counters.socket_errors;
    return nullptr;
  }
  ++nic.counters.sockets_opened;
  nic.sender_ports.push_back(port);
  Sender& sender = nic.senders.emplace_back();
  sender.fd = std::move(fd);
  sender.last_used = now;
  return &sender;
}

SendResult UdpTransport::Send(const ProbeOrder& order, std::span<const std::uint8_t> payload) {
  SendResult result;
  result.app_send = {RealtimeNs(), TimestampSource::kUser};
  if (order.src >= nics_.size() || !nics_[order.src].open || order.dst >= nics_.size()) {
    result.status = SendStatus::kFailed;
    result.error = EBADF;
    return result;
  }
  Nic& nic = nics_[order.src];
  const MonoTime now = clock_.MonotonicNow();
  int error = 0;
  Sender* sender = SenderFor(order.src, order.src_port, now, error);
  if (sender == nullptr) {
    result.error = error;
    result.status = IsNicGone(error) ? SendStatus::kFailed : SendStatus::kRetryLater;
    ++(result.status == SendStatus::kFailed ? nic.counters.send_errors
                                            : nic.counters.send_retry_later);
    return result;
  }
  sender->last_used = now;
  const std::uint16_t dst_port = order.dst_port != 0 ? order.dst_port : options_.dst_port;
  const Nic& dst = nics_[order.dst];
  std::optional<SocketAddress> other_port;  // not built (128 bytes) for a probe
  if (dst_port != options_.dst_port) other_port = MakeSocketAddress(dst.config.ip, dst_port);
  const SocketAddress& to = other_port ? *other_port : dst.probe_address;

  ssize_t sent = -1;
  for (int attempt = 0; attempt < 2; ++attempt) {
    // (1) as late as possible before the kernel takes the packet.
    result.app_send = {RealtimeNs(), TimestampSource::kUser};
    sent = PlainSendto(sender->fd.get(), payload.data(), payload.size(), MSG_DONTWAIT, to.get(),
                       to.length);
    if (sent >= 0 || !IsStickyIcmpError(errno)) break;
    ++nic.counters.icmp_errors;
  }
  if (sent < 0) {
    result.error = errno;
    if (IsRetryLater(result.error)) {
      result.status = SendStatus::kRetryLater;
      ++nic.counters.send_retry_later;
    } else {
      result.status = SendStatus::kFailed;
      ++nic.counters.send_errors;
    }
    return result;
  }
  ++nic.counters.sends;
  sender->fifo.Push(PendingSend{order.sequence, result.app_send.ns, now});
  result.status = SendStatus::kOk;
  result.nic_send_pending = true;
  return result;
}

std::size_t UdpTransport::Poll(std::vector<TransportEvent>& out, std::size_t max_events) {
  if (clock_.MonotonicNow() >= next_sweep_) Sweep();
  std::array<epoll_event, 64> ready;
  const int n = PlainEpollWait(epoll_.get(), ready.data(), static_cast<int>(ready.size()), 0);
  std::size_t appended = 0;
  for (int i = 0; i < n && appended < max_events; ++i) {
    const std::uint64_t key = ready[static_cast<std::size_t>(i)].data.u64;
    const auto id = static_cast<NicId>((key >> 16) & 0xFFFF'FFFFULL);
    if (id >= nics_.size()) continue;
    Nic& nic = nics_[id];
    if ((key & kSenderBit) == 0) {
      if (ready[static_cast<std::size_t>(i)].events & EPOLLERR) {
        // No IP_RECVERR here, so this is a plain sk_err: reading it clears it.
        int so_error = 0;
        socklen_t len = sizeof(so_error);
        ::getsockopt(nic.receiver.get(), SOL_SOCKET, SO_ERROR, &so_error, &len);
        ++nic.counters.receive_errors;
      }
      appended += DrainReceive(id, out, max_events - appended);
      continue;
    }
    const std::ptrdiff_t index = FindSender(nic, static_cast<std::uint16_t>(key & 0xFFFF));
    if (index < 0) continue;
    appended +=
        DrainErrQueue(id, nic.senders[static_cast<std::size_t>(index)], out, max_events - appended);
  }
  return appended;
}

Timestamp UdpTransport::PickReceiveStamp(Nic& nic, std::int64_t software_ns,
                                         std::int64_t hardware_ns) {
  if (hardware_ns != 0) {
    const std::int64_t skew = hardware_ns - software_ns;
    if (software_ns == 0 || (skew <= options_.hardware_max_skew.count() &&
                             -skew <= options_.hardware_max_skew.count())) {
      return {hardware_ns, TimestampSource::kHardware};
    }
    ++nic.counters.implausible_stamps;
  }
  if (software_ns != 0) return {software_ns, TimestampSource::kKernel};
  ++nic.counters.rx_without_stamp;
  return {};
}

std::size_t UdpTransport::DrainReceive(NicId id, std::vector<TransportEvent>& out,
                                       std::size_t budget) {
  Nic& nic = nics_[id];
  std::size_t appended = 0;
  while (appended < budget) {
    const std::size_t asked = std::min(budget - appended, rx_batch_.capacity());
    const int n = rx_batch_.Receive(nic.receiver.get(), 0, asked);
    // (4) right after the read, before any parsing.
    const std::int64_t app_recv = RealtimeNs();
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) ++nic.counters.receive_errors;
      break;
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
      ++nic.counters.received;
      if ((rx_batch_.flags(i) & MSG_TRUNC) != 0) ++nic.counters.truncated;
      const ScmTimestamps stamps = ParseReceiveCmsgs(rx_batch_.header(i));
      TransportEvent& event = out.emplace_back();
      event.kind = TransportEvent::Kind::kReceived;
      event.nic = id;
      event.nic_time = PickReceiveStamp(nic, stamps.software_ns, stamps.hardware_ns);
      event.app_time = {app_recv, TimestampSource::kUser};
      const std::span<const std::uint8_t> bytes = rx_batch_.data(i);
      payloads_.Fill(event.payload, bytes);
    }
    appended += static_cast<std::size_t>(n);
    if (static_cast<std::size_t>(n) < asked) break;  // the queue is empty
  }
  return appended;
}

std::size_t UdpTransport::DrainErrQueue(NicId id, Sender& sender, std::vector<TransportEvent>& out,
                                        std::size_t budget) {
  Nic& nic = nics_[id];
  std::size_t appended = 0;
  while (appended < budget) {
    // Ask for no more than the budget allows: every message may be a stamp.
    const std::size_t asked = std::min(budget - appended, err_batch_.capacity());
    const int n = err_batch_.Receive(sender.fd.get(), MSG_ERRQUEUE, asked);
    if (n < 0) break;
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
      // Built in place (no copy of the event and its payload vector): nearly
      // every message is a stamp.
      if (OnErrQueueMessage(nic, id, sender, err_batch_.header(i), out.emplace_back())) {
        ++appended;
      } else {
        out.pop_back();
      }
    }
    if (static_cast<std::size_t>(n) < asked) break;  // the queue is empty
  }
  return appended;
}

bool UdpTransport::OnErrQueueMessage(Nic& nic, NicId id, Sender& sender, const msghdr& msg,
                                     TransportEvent& event) {
  const ErrQueueMessage parsed = ParseErrQueueMessage(msg);
  switch (parsed.kind) {
    case ErrQueueMessage::Kind::kIcmpError:
      ++nic.counters.icmp_errors;
      return false;
    case ErrQueueMessage::Kind::kLocalError:
    case ErrQueueMessage::Kind::kMalformed:
      ++nic.counters.other_errqueue;
      return false;
    case ErrQueueMessage::Kind::kTxTimestamp:
      break;
  }
  if (parsed.tstamp_type != SCM_TSTAMP_SND) {
    ++nic.counters.other_errqueue;
    return false;
  }
  const std::optional<PendingSend> send = sender.fifo.Take(parsed.opt_id);
  if (!send) {
    ++nic.counters.tx_stamps_unmatched;
    return false;
  }
  Timestamp stamp;
  if (nic.mode == TimestampMode::kHardware) {
    stamp = {parsed.stamps.hardware_ns, TimestampSource::kHardware};
  } else {
    stamp = {parsed.stamps.software_ns, TimestampSource::kKernel};
  }
  // A stamp must come after its send and not long after: anything else is
  // a PHC off CLOCK_REALTIME or a counter out of step with ours.
  const std::int64_t after_send = stamp.ns - send->app_send_ns;
  if (!stamp.known() || after_send < -options_.hardware_max_skew.count() ||
      after_send > options_.tx_stamp_timeout.count()) {
    ++nic.counters.implausible_stamps;
    return false;
  }
  ++nic.counters.tx_stamps;
  event.kind = TransportEvent::Kind::kSendTimestamp;
  event.nic = id;
  event.sequence = send->sequence;
  event.nic_time = stamp;
  return true;
}

void UdpTransport::CloseSender(NicId id, std::size_t index) {
  Nic& nic = nics_[id];
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, nic.senders[index].fd.get(), nullptr);
  // Order does not matter: swap the last one into the hole.
  nic.senders[index] = std::move(nic.senders.back());
  nic.senders.pop_back();
  nic.sender_ports[index] = nic.sender_ports.back();
  nic.sender_ports.pop_back();
  ++nic.counters.sockets_closed;
}

void UdpTransport::Sweep() {
  const MonoTime now = clock_.MonotonicNow();
  next_sweep_ = now + kSweepPeriod;
  for (NicId id = 0; id < nics_.size(); ++id) {
    Nic& nic = nics_[id];
    for (std::size_t i = nic.senders.size(); i-- > 0;) {
      Sender& sender = nic.senders[i];
      nic.counters.tx_stamps_lost += sender.fifo.Expire(now - options_.tx_stamp_timeout);
      // Keep a socket while a stamp of it may still come: closing it would
      // throw that stamp away with the error queue.
      if (sender.fifo.pending() == 0 && now - sender.last_used >= options_.idle_close) {
        CloseSender(id, i);  // moves the last one to i: already visited
      }
    }
  }
}

}  // namespace hostmesh::agent::udp
