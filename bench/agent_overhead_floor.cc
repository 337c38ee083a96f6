// The kernel's share of the agent's UDP probing, measured alone: the same
// sockets as the agent's UDP transport (a receive socket per NIC, 16 send
// sockets per NIC, all bound to the NIC's device with SO_TIMESTAMPING, TX
// stamps through the error queue), one sleep per round, one probe per NIC per
// round to a random other NIC from a random pool port, then every ready socket
// drained with one recvmmsg. Nothing else: no decoding, matching, metrics or
// upload. What this costs is the floor any agent with this transport design
// pays on the machine it runs on; bench/agent_overhead.sh prints it beside
// the agent's figures.
//
// Usage: agent_overhead_floor INTERVAL_NS NETDEV=IPV4 NETDEV=IPV4 ...   (runs until killed)
#include <arpa/inet.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/net/roce.h"

namespace {

constexpr int kPoolPorts = 16;
constexpr std::uint16_t kDstPort = hostmesh::net::kRoceV2Port;
constexpr std::uint16_t kFirstPoolPort = 50000;

struct Nic {
  std::string netdev;
  in_addr ip{};
  int receiver = -1;
  std::vector<int> senders;
};

void SetInt(int fd, int level, int name, int value) {
  if (::setsockopt(fd, level, name, &value, sizeof(value)) != 0) std::perror("setsockopt");
}

int Open(const Nic& nic, std::uint16_t port, bool sender) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
  ::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, nic.netdev.c_str(),
               static_cast<socklen_t>(nic.netdev.size()));
  if (sender) {
    SetInt(fd, IPPROTO_IP, IP_RECVERR, 1);
    SetInt(fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_PROBE);
    SetInt(fd, SOL_SOCKET, SO_REUSEADDR, 1);
    SetInt(fd, SOL_SOCKET, SO_TIMESTAMPING,
           SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY | SOF_TIMESTAMPING_TX_SOFTWARE |
               SOF_TIMESTAMPING_SOFTWARE);
  } else {
    SetInt(fd, SOL_SOCKET, SO_TIMESTAMPING,
           SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE);
  }
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_port = htons(port);
  local.sin_addr = nic.ip;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
    std::perror(("bind " + nic.netdev).c_str());
    std::exit(1);
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s INTERVAL_NS NETDEV=IPV4 NETDEV=IPV4 ...\n", argv[0]);
    return 2;
  }
  const long interval_ns = std::atol(argv[1]);
  std::vector<Nic> nics;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    Nic& nic = nics.emplace_back();
    nic.netdev = arg.substr(0, eq);
    if (eq == std::string::npos || ::inet_pton(AF_INET, arg.c_str() + eq + 1, &nic.ip) != 1) {
      std::fprintf(stderr, "bad NIC %s (want NETDEV=IPV4)\n", argv[i]);
      return 2;
    }
  }
  const int epoll = ::epoll_create1(EPOLL_CLOEXEC);
  const auto watch = [epoll](int fd, std::uint32_t events) {
    epoll_event event{};
    event.events = events;
    event.data.fd = fd;
    ::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
  };
  for (Nic& nic : nics) {
    nic.receiver = Open(nic, kDstPort, false);
    watch(nic.receiver, EPOLLIN);
    for (int p = 0; p < kPoolPorts; ++p) {
      nic.senders.push_back(Open(nic, static_cast<std::uint16_t>(kFirstPoolPort + p), true));
      watch(nic.senders.back(), 0);  // EPOLLERR: the error queue has a stamp
    }
  }

  constexpr int kBatch = 16;
  std::array<mmsghdr, kBatch> headers{};
  std::array<iovec, kBatch> iovs{};
  std::array<std::array<char, 256>, kBatch> data{};
  std::array<std::array<char, 512>, kBatch> control{};
  for (int i = 0; i < kBatch; ++i) {
    iovs[i] = {data[i].data(), data[i].size()};
    headers[i].msg_hdr.msg_iov = &iovs[i];
    headers[i].msg_hdr.msg_iovlen = 1;
    headers[i].msg_hdr.msg_control = control[i].data();
  }
  std::array<char, 50> payload{};
  std::mt19937 rng(1);
  timespec next{};
  ::clock_gettime(CLOCK_MONOTONIC, &next);
  for (;;) {
    next.tv_nsec += interval_ns;
    while (next.tv_nsec >= 1'000'000'000) {
      next.tv_nsec -= 1'000'000'000;
      ++next.tv_sec;
    }
    ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
    for (std::size_t src = 0; src < nics.size(); ++src) {
      std::size_t dst = rng() % (nics.size() - 1);
      if (dst >= src) ++dst;
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(kDstPort);
      to.sin_addr = nics[dst].ip;
      timespec now{};
      ::clock_gettime(CLOCK_REALTIME, &now);
      std::memcpy(payload.data(), &now, sizeof(now));
      ::sendto(nics[src].senders[rng() % kPoolPorts], payload.data(), payload.size(), MSG_DONTWAIT,
               reinterpret_cast<sockaddr*>(&to), sizeof(to));
    }
    std::array<epoll_event, 64> ready{};
    const int n = ::epoll_wait(epoll, ready.data(), static_cast<int>(ready.size()), 0);
    for (int i = 0; i < n; ++i) {
      for (mmsghdr& header : headers) header.msg_hdr.msg_controllen = control[0].size();
      const bool error_queue = (ready[i].events & EPOLLERR) != 0;
      ::recvmmsg(ready[i].data.fd, headers.data(), kBatch,
                 MSG_DONTWAIT | (error_queue ? MSG_ERRQUEUE : 0), nullptr);
    }
  }
}
