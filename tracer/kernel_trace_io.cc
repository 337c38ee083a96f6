#include "tracer/kernel_trace_io.h"

#include <arpa/inet.h>
#include <linux/icmp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "common/base/sticky_socket_error.h"

namespace hostmesh::tracer {
namespace {

std::string Errno(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

sockaddr_in SockAddr(Ipv4 ip, std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(ip.value);
  addr.sin_port = htons(port);
  return addr;
}

// Points `fd` at the destination of `tuple` unless it already is.
std::string ConnectTo(int fd, const FiveTuple& tuple, Ipv4& peer, std::uint16_t& peer_port) {
  if (peer == tuple.dst && peer_port == tuple.dport) return {};
  const sockaddr_in to = SockAddr(tuple.dst, tuple.dport);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) != 0) {
    peer = {};
    return Errno("connect " + tuple.dst.ToString() + ":" + std::to_string(tuple.dport));
  }
  peer = tuple.dst;
  peer_port = tuple.dport;
  return {};
}

constexpr int kIcmpReceiveBuffer = 1 << 20;
// Our probes are at most 171 bytes (probe_tag.h), so a reply quoting all of
// one, RFC 4884 padding and extensions included, is well under 1 KiB. A
// longer ICMP error quotes someone else's datagram: read truncated, it fails
// to parse and is counted unparsable, as it could not be ours anyway.
constexpr std::size_t kMaxPacket = 2048;

}  // namespace

std::unique_ptr<KernelTraceIo> KernelTraceIo::Create(const Clock& clock, std::uint8_t tos,
                                                     std::string& error) {
  UniqueFd fd(::socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMP));
  if (!fd.valid()) {
    error = Errno("raw ICMP socket (needs CAP_NET_RAW)");
    return nullptr;
  }
  // A set bit filters that ICMP type out.
  icmp_filter filter{};
  filter.data = ~((1U << ICMP_DEST_UNREACH) | (1U << ICMP_TIME_EXCEEDED));
  if (::setsockopt(fd.get(), SOL_RAW, ICMP_FILTER, &filter, sizeof(filter)) != 0) {
    error = Errno("ICMP_FILTER");
    return nullptr;
  }
  // Best effort: a larger buffer only matters when many hosts' replies cross.
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &kIcmpReceiveBuffer,
                     sizeof(kIcmpReceiveBuffer));
  return std::unique_ptr<KernelTraceIo>(new KernelTraceIo(clock, tos, std::move(fd)));
}

std::string KernelTraceIo::Open(const FiveTuple& tuple, const std::string& netdev) {
  const SocketKey key{tuple.src.value, tuple.sport};
  if (const auto it = sockets_.find(key); it != sockets_.end()) {
    if (it->second.netdev == netdev) {
      it->second.last_use = ++uses_;
      return ConnectTo(it->second.fd.get(), tuple, it->second.peer, it->second.peer_port);
    }
    sockets_.erase(it);
  }
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP));
  if (!fd.valid()) return Errno("udp socket");
  const int one = 1;
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
    return Errno("SO_REUSEADDR");
  }
  if (::setsockopt(fd.get(), IPPROTO_IP, IP_TOS, &tos_, sizeof(tos_)) != 0) {
    return Errno("IP_TOS " + std::to_string(tos_));
  }
  if (!netdev.empty() && ::setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, netdev.c_str(),
                                      static_cast<socklen_t>(netdev.size())) != 0) {
    return Errno("SO_BINDTODEVICE " + netdev);
  }
  const sockaddr_in local = SockAddr(tuple.src, tuple.sport);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&local), sizeof(local)) != 0) {
    return Errno("bind " + tuple.src.ToString() + ":" + std::to_string(tuple.sport));
  }
  SendSocket socket{std::move(fd), netdev, {}, 0, ++uses_};
  if (std::string error = ConnectTo(socket.fd.get(), tuple, socket.peer, socket.peer_port);
      !error.empty()) {
    return error;
  }
  if (sockets_.size() >= kMaxSendSockets) {
    sockets_.erase(std::min_element(
        sockets_.begin(), sockets_.end(),
        [](const auto& a, const auto& b) { return a.second.last_use < b.second.last_use; }));
  }
  sockets_.emplace(key, std::move(socket));
  return {};
}

std::string KernelTraceIo::Send(const FiveTuple& tuple, int ttl,
                                std::span<const std::uint8_t> payload) {
  const auto it = sockets_.find(SocketKey{tuple.src.value, tuple.sport});
  if (it == sockets_.end()) return "5-tuple not open";
  SendSocket& socket = it->second;
  if (socket.peer != tuple.dst || socket.peer_port != tuple.dport) {
    return "5-tuple not open (its source is open towards " + socket.peer.ToString() + ":" +
           std::to_string(socket.peer_port) + ")";
  }
  iovec iov{const_cast<std::uint8_t*>(payload.data()), payload.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = IPPROTO_IP;
  cmsg->cmsg_type = IP_TTL;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &ttl, sizeof(ttl));
  ssize_t sent = ::sendmsg(socket.fd.get(), &msg, 0);
  // The error an earlier probe drew (the destination's Port Unreachable) is
  // reported once, by this send, which did not go out: once more.
  if (sent < 0 && IsStickyIcmpError(errno)) sent = ::sendmsg(socket.fd.get(), &msg, 0);
  if (sent < 0) {
    std::string error = Errno("sendmsg " + tuple.dst.ToString());
    // Opened afresh next time: the device it is bound to may have gone and come back.
    sockets_.erase(it);
    return error;
  }
  return {};
}

bool KernelTraceIo::Receive(MonoTime deadline, std::vector<std::uint8_t>& packet,
                            MonoTime& received_at) {
  // Into a buffer kept across calls: resizing `packet` to 64 KiB zero-filled
  // it on every reply (a tenth of the tracer thread's time); 2 KiB, not 64,
  // since nothing past an ICMP error's first bytes is read.
  if (buffer_.size() < kMaxPacket) buffer_.resize(kMaxPacket);
  for (;;) {
    const ssize_t n = ::recv(icmp_.get(), buffer_.data(), buffer_.size(), MSG_DONTWAIT);
    if (n >= 0) {
      received_at = clock_.MonotonicNow();
      packet.assign(buffer_.begin(), buffer_.begin() + n);
      return true;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
    const auto left = deadline - clock_.MonotonicNow();
    if (left <= std::chrono::nanoseconds{0}) return false;
    // poll() takes milliseconds: round up so we never spin just short of the deadline.
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    pollfd pfd{icmp_.get(), POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(ms)) < 0 && errno != EINTR) return false;
  }
}

void KernelTraceIo::SleepUntil(MonoTime until) {
  std::this_thread::sleep_until(until);
}

}  // namespace hostmesh::tracer
