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
#include <cstring>
#include <optional>

namespace hostmesh::tracer {
namespace {

constexpr Ipv4 kLoopback{0x7f000001};

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
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(kLoopback.value);
    EXPECT_EQ(::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
  }
  std::uint16_t port() const { return port_; }

  std::optional<Received> Next() {
    pollfd pfd{fd_.get(), POLLIN, 0};
    if (::poll(&pfd, 1, 2000) != 1) return std::nullopt;
    std::array<char, 256> data{};
    alignas(cmsghdr) std::array<char, 256> control{};
    iovec iov{data.data(), data.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    if (::recvmsg(fd_.get(), &msg, 0) < 0) return std::nullopt;
    Received out;
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

TEST(KernelTraceIoTest, ProbesCarryTheTrafficClassAndTheTtl) {
  SystemClock clock;
  std::string error;
  auto io = KernelTraceIo::Create(clock, 106, error);
  if (!io) GTEST_SKIP() << "needs CAP_NET_RAW: " << error;
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

}  // namespace
}  // namespace hostmesh::tracer
