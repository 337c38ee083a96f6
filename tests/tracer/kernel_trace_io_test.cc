// KernelTraceIo's probes on loopback: they carry the traffic class they were
// created with (a traceroute must take the probes' queue) and the TTL asked.
// Needs CAP_NET_RAW (the raw ICMP socket); skips otherwise.
#include "tracer/kernel_trace_io.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

namespace hostmesh::tracer {
namespace {

constexpr Ipv4 kLoopback{0x7f000001};

// Binds `fd` to a port of the kernel's choice on loopback; returns the port.
std::uint16_t BindLoopback(int fd) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(kLoopback.value);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  return ntohs(addr.sin_port);
}

// One datagram (or error-queue message) with room for its control messages.
struct Message {
  std::array<char, 256> data{};
  alignas(cmsghdr) std::array<char, 256> control{};
  iovec iov{data.data(), data.size()};
  msghdr header{};

  ssize_t Receive(int fd, int flags) {
    header = {};
    header.msg_iov = &iov;
    header.msg_iovlen = 1;
    header.msg_control = control.data();
    header.msg_controllen = control.size();
    return ::recvmsg(fd, &header, flags);
  }
};

struct Received {
  int tos = -1;
  int ttl = -1;
};

// A UDP receiver on loopback that reports each datagram's TOS and TTL.
class Receiver {
 public:
  Receiver() : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP)) {
    const int one = 1;
    EXPECT_EQ(::setsockopt(fd_.get(), IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)), 0);
    EXPECT_EQ(::setsockopt(fd_.get(), IPPROTO_IP, IP_RECVTTL, &one, sizeof(one)), 0);
    port_ = BindLoopback(fd_.get());
  }
  std::uint16_t port() const { return port_; }

  std::optional<Received> Next() {
    pollfd pfd{fd_.get(), POLLIN, 0};
    if (::poll(&pfd, 1, 2000) != 1) return std::nullopt;
    Message message;
    if (message.Receive(fd_.get(), 0) < 0) return std::nullopt;
    Received out;
    msghdr& msg = message.header;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != IPPROTO_IP) continue;
      if (c->cmsg_type == IP_TOS) out.tos = *reinterpret_cast<unsigned char*>(CMSG_DATA(c));
      if (c->cmsg_type == IP_TTL) std::memcpy(&out.ttl, CMSG_DATA(c), sizeof(int));
    }
    return out;
  }

 private:
  UniqueFd fd_;
  std::uint16_t port_ = 0;
};

// Whether this process may open raw sockets: without it the tracer cannot
// run here, and its tests skip; with it, a failed Create is the tracer's.
bool HasNetRaw() {
  UniqueFd fd(::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP));
  return fd.get() >= 0 || (errno != EPERM && errno != EACCES);
}

TEST(KernelTraceIoTest, ProbesCarryTheTrafficClassAndTheTtl) {
  SystemClock clock;
  std::string error;
  auto io = KernelTraceIo::Create(clock, 106, error);
  if (!io && !HasNetRaw()) GTEST_SKIP() << "needs CAP_NET_RAW: " << error;
  ASSERT_TRUE(io) << error;
  Receiver receiver;
  const FiveTuple tuple{kLoopback, kLoopback, 0, receiver.port(), kIpProtoUdp};
  ASSERT_EQ(io->Open(tuple, "lo"), "");
  const std::array<std::uint8_t, 4> payload{1, 2, 3, 4};
  ASSERT_EQ(io->Send(tuple, 5, payload), "");
  const auto got = receiver.Next();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->tos, 106);
  EXPECT_EQ(got->ttl, 5);
}

// A free UDP port on loopback: bound by the kernel, then let go.
std::uint16_t FreePort() {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP));
  return BindLoopback(fd.get());
}

// The agent's probe socket holds (src, sport) as the tracer does: bound to
// the same device and address with SO_REUSEADDR and IP_RECVERR, and opened
// after the tracer's, so it wins the kernel's lookup of an unconnected pair.
// The ICMP errors a trace draws must still reach only the tracer: each one in
// the probe socket is a wake-up of the probe loop, an error counted against
// the probes and a failed next probe.
TEST(KernelTraceIoTest, ErrorsATraceDrawsStayOutOfTheProbeSocketOfItsSourcePort) {
  SystemClock clock;
  std::string error;
  auto io = KernelTraceIo::Create(clock, 0, error);
  if (!io && !HasNetRaw()) GTEST_SKIP() << "needs CAP_NET_RAW: " << error;
  ASSERT_TRUE(io) << error;
  const std::uint16_t sport = FreePort();
  const FiveTuple first{kLoopback, kLoopback, sport, FreePort(), kIpProtoUdp};
  ASSERT_EQ(io->Open(first, "lo"), "");

  UniqueFd probe(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP));
  const int one = 1;
  ASSERT_EQ(::setsockopt(probe.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
  ASSERT_EQ(::setsockopt(probe.get(), IPPROTO_IP, IP_RECVERR, &one, sizeof(one)), 0);
  ASSERT_EQ(::setsockopt(probe.get(), SOL_SOCKET, SO_BINDTODEVICE, "lo", 2), 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = htonl(kLoopback.value);
  local.sin_port = htons(sport);
  ASSERT_EQ(::bind(probe.get(), reinterpret_cast<sockaddr*>(&local), sizeof(local)), 0);

  // Nobody listens on either destination port: each probe draws a Port
  // Unreachable. The second destination reuses the (src, sport) socket.
  const FiveTuple second{kLoopback, kLoopback, sport, FreePort(), kIpProtoUdp};
  const std::array<std::uint8_t, 4> payload{1, 2, 3, 4};
  int replies = 0;
  for (const FiveTuple& tuple : {first, first, second, second}) {
    ASSERT_EQ(io->Open(tuple, "lo"), "");
    // The second probe of each pair goes out past the first's sticky error.
    ASSERT_EQ(io->Send(tuple, 64, payload), "");
    std::vector<std::uint8_t> packet;
    MonoTime at;
    replies += io->Receive(clock.MonotonicNow() + std::chrono::seconds(2), packet, at) ? 1 : 0;
  }
  EXPECT_EQ(replies, 4) << "every Port Unreachable still reaches the tracer's ICMP socket";

  Message message;
  EXPECT_LT(message.Receive(probe.get(), MSG_ERRQUEUE | MSG_DONTWAIT), 0)
      << "an ICMP error of a trace reached the probe socket's error queue";
  int pending = 0;
  socklen_t len = sizeof(pending);
  ASSERT_EQ(::getsockopt(probe.get(), SOL_SOCKET, SO_ERROR, &pending, &len), 0);
  EXPECT_EQ(pending, 0) << "the probe socket holds a sticky error: " << std::strerror(pending);
}

}  // namespace
}  // namespace hostmesh::tracer
