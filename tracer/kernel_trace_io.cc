#include "tracer/kernel_trace_io.h"

#include <arpa/inet.h>
#include <linux/icmp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <thread>

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

constexpr int kIcmpReceiveBuffer = 1 << 20;
constexpr std::size_t kMaxPacket = 65535;

}  // namespace

std::unique_ptr<KernelTraceIo> KernelTraceIo::Create(const Clock& clock, std::string& error) {
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
  return std::unique_ptr<KernelTraceIo>(new KernelTraceIo(clock, std::move(fd)));
}

std::string KernelTraceIo::Open(const FiveTuple& tuple, const std::string& netdev) {
  udp_.Reset();
  tuple_ = tuple;
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP));
  if (!fd.valid()) return Errno("udp socket");
  const int one = 1;
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
    return Errno("SO_REUSEADDR");
  }
  if (!netdev.empty() && ::setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, netdev.c_str(),
                                      static_cast<socklen_t>(netdev.size())) != 0) {
    return Errno("SO_BINDTODEVICE " + netdev);
  }
  const sockaddr_in local = SockAddr(tuple.src, tuple.sport);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&local), sizeof(local)) != 0) {
    return Errno("bind " + tuple.src.ToString() + ":" + std::to_string(tuple.sport));
  }
  udp_ = std::move(fd);
  return {};
}

std::string KernelTraceIo::Send(int ttl, std::span<const std::uint8_t> payload) {
  if (!udp_.valid()) return "no 5-tuple open";
  if (::setsockopt(udp_.get(), IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) != 0) return Errno("IP_TTL");
  const sockaddr_in dst = SockAddr(tuple_.dst, tuple_.dport);
  const ssize_t n = ::sendto(udp_.get(), payload.data(), payload.size(), 0,
                             reinterpret_cast<const sockaddr*>(&dst), sizeof(dst));
  if (n < 0) return Errno("sendto " + tuple_.dst.ToString());
  return {};
}

bool KernelTraceIo::Receive(MonoTime deadline, std::vector<std::uint8_t>& packet,
                            MonoTime& received_at) {
  packet.resize(kMaxPacket);
  for (;;) {
    const ssize_t n = ::recv(icmp_.get(), packet.data(), packet.size(), MSG_DONTWAIT);
    if (n >= 0) {
      received_at = clock_.MonotonicNow();
      packet.resize(static_cast<std::size_t>(n));
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
