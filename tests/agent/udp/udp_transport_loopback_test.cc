// Two "NICs" on lo (127.0.0.1 and 127.0.0.2), a few real seconds of the probe
// loop: the sockets, SO_TIMESTAMPING, OPT_ID matching and epoll wiring,
// without root or a fabric. lo stamps in software like veth does.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "common/base/unique_fd.h"
#include "tests/agent/udp/real_time_probe_loop.h"

namespace hostmesh::agent::udp {
namespace {

using namespace std::chrono_literals;

config::IpAddress V4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  config::IpAddress ip;
  ip.bytes[0] = a;
  ip.bytes[1] = b;
  ip.bytes[2] = c;
  ip.bytes[3] = d;
  return ip;
}

// A port free on both addresses right now (the kernel's pick for one of them).
std::uint16_t FreePort() {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof(addr);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return 0;
  }
  return ntohs(addr.sin_port);
}

UdpTransportOptions LoopbackOptions() {
  UdpTransportOptions options;
  options.nics = {{"lo-a", "lo", V4(127, 0, 0, 1)}, {"lo-b", "lo", V4(127, 0, 0, 2)}};
  options.dst_port = FreePort();
  return options;
}

TEST(UdpTransportLoopback, EveryProbeArrivesWithFourKernelTimestamps) {
  UdpTransportOptions options = LoopbackOptions();
  ASSERT_NE(options.dst_port, 0);
  const testing::LoopRun run = testing::RunProbeLoop(options, 20ms, 1500ms, 700ms);
  // Loopback sockets open anywhere: a failure here is the transport's.
  ASSERT_TRUE(run.open_errors.empty()) << "cannot open lo sockets: " << run.open_errors[0];
  for (const NicCapabilities& caps : run.capabilities) {
    EXPECT_EQ(caps.send_timestamps, TimestampSource::kKernel);
    EXPECT_EQ(caps.recv_timestamps, TimestampSource::kKernel);
  }
  ASSERT_GT(run.results.size(), 100U);  // 2 NICs x 75 probes
  std::set<std::uint16_t> ports;
  std::vector<std::int64_t> one_way;
  for (const ProbeResult& r : run.results) {
    SCOPED_TRACE(::testing::Message() << r.src_nic << "->" << r.dst_nic << " seq " << r.sequence);
    ASSERT_FALSE(r.timeout);
    EXPECT_EQ(r.src_nic + r.dst_nic, 1U);
    EXPECT_EQ(r.send_timestamp_source, TimestampSource::kKernel);
    EXPECT_EQ(r.recv_timestamp_source, TimestampSource::kKernel);
    EXPECT_LE(r.app_send_ns, r.nic_send_ns);
    EXPECT_LT(r.nic_send_ns, r.nic_recv_ns);
    EXPECT_LE(r.nic_recv_ns, r.app_recv_ns);
    one_way.push_back(r.nic_recv_ns - r.nic_send_ns);
    ports.insert(r.src_port);
  }
  // Loopback delivers within microseconds; a busy machine may defer single
  // packets to ksoftirqd, which moves the tail, not the median.
  std::sort(one_way.begin(), one_way.end());
  EXPECT_LT(one_way[one_way.size() / 2], 1'000'000);
  EXPECT_GT(ports.size(), 8U);
  for (std::size_t nic = 0; nic < 2; ++nic) {
    const UdpNicCounters& c = run.counters[nic];
    EXPECT_EQ(c.send_errors + c.send_retry_later + c.socket_errors, 0U);
    EXPECT_EQ(c.tx_stamps_unmatched + c.tx_stamps_lost + c.implausible_stamps, 0U);
    EXPECT_EQ(c.icmp_errors + c.other_errqueue + c.receive_errors + c.truncated, 0U);
    EXPECT_EQ(c.tx_stamps, c.sends);        // every send's stamp came back and matched
    EXPECT_LE(run.send_sockets[nic], 16U);  // one per pool port
    EXPECT_EQ(c.sockets_opened, run.send_sockets[nic]);
  }
}

TEST(UdpTransportLoopback, DontFragmentSetsDfWithoutPathMtuState) {
  SocketSpec spec;
  spec.local = MakeSocketAddress(V4(127, 0, 0, 1), 0);
  spec.dont_fragment = true;
  std::string error;
  int error_number = 0;
  const UniqueFd fd = OpenBoundSocket(spec, error, error_number);
  ASSERT_TRUE(fd.valid()) << error;
  int mode = -1;
  socklen_t len = sizeof(mode);
  ASSERT_EQ(::getsockopt(fd.get(), IPPROTO_IP, IP_MTU_DISCOVER, &mode, &len), 0);
  EXPECT_EQ(mode, IP_PMTUDISC_PROBE);
}

TEST(UdpTransportLoopback, OpenNicReportsWhatIsWrong) {
  const SystemClock clock;
  UdpTransportOptions options = LoopbackOptions();
  options.nics.push_back({"ghost", "nosuchdev0", V4(127, 0, 0, 3)});
  UdpTransport transport(clock, options);
  EXPECT_FALSE(transport.OpenNic(7).ok);
  const OpenResult ghost = transport.OpenNic(2);
  EXPECT_FALSE(ghost.ok);
  EXPECT_NE(ghost.error.find("nosuchdev0"), std::string::npos) << ghost.error;
  ASSERT_TRUE(transport.OpenNic(0).ok);
  EXPECT_FALSE(transport.OpenNic(0).ok);  // twice
  // Sending from a NIC that did not open fails at once, never throws.
  const std::uint8_t payload[50] = {};
  const SendResult sent = transport.Send(ProbeOrder{2, 0, 50000, 0, 1, {}, 0}, payload);
  EXPECT_EQ(sent.status, SendStatus::kFailed);
}

TEST(UdpTransportLoopback, IcmpPortUnreachableIsCountedNotTakenForAStamp) {
  const SystemClock clock;
  UdpTransportOptions options = LoopbackOptions();
  UdpTransport transport(clock, options);
  ASSERT_TRUE(transport.OpenNic(0).ok);  // NIC 1 stays closed: nobody listens on it
  const std::uint8_t payload[50] = {};
  const std::uint16_t dst_port = options.dst_port;
  ASSERT_EQ(transport.Send(ProbeOrder{0, 1, 50001, dst_port, 1, {}, 0}, payload).status,
            SendStatus::kOk);
  std::vector<TransportEvent> events;
  for (int i = 0; i < 100 && transport.counters(0).icmp_errors == 0; ++i) {
    epoll_event ready{};
    ::epoll_wait(transport.ReadyFd(), &ready, 1, 10);
    transport.Poll(events, 64);
  }
  EXPECT_EQ(transport.counters(0).icmp_errors, 1U);
  EXPECT_EQ(transport.counters(0).tx_stamps, 1U);
  EXPECT_EQ(transport.counters(0).tx_stamps_unmatched, 0U);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].kind, TransportEvent::Kind::kSendTimestamp);
  EXPECT_EQ(events[0].sequence, 1U);
  // The socket's pending ICMP error must not fail the next probe.
  EXPECT_EQ(transport.Send(ProbeOrder{0, 1, 50001, dst_port, 2, {}, 0}, payload).status,
            SendStatus::kOk);
}

TEST(UdpTransportLoopback, AStickyIcmpErrorDoesNotCostTheNextProbe) {
  const SystemClock clock;
  UdpTransportOptions options = LoopbackOptions();
  UdpTransport transport(clock, options);
  ASSERT_TRUE(transport.OpenNic(0).ok);
  const std::uint8_t payload[50] = {};
  const std::uint16_t dst_port = options.dst_port;
  ASSERT_EQ(transport.Send(ProbeOrder{0, 1, 50002, dst_port, 1, {}, 0}, payload).status,
            SendStatus::kOk);
  epoll_event ready{};
  ::epoll_wait(transport.ReadyFd(), &ready, 1, 100);  // the ICMP error is queued by now
  EXPECT_EQ(transport.Send(ProbeOrder{0, 1, 50002, dst_port, 2, {}, 0}, payload).status,
            SendStatus::kOk);
}

// Send sockets follow the pool: opened on first use, closed after idle_close,
// but never while a TX stamp of theirs is outstanding.
TEST(UdpTransportLoopback, SendSocketsCloseWhenIdleButNotBeforeTheirStamps) {
  const WallTime now{std::chrono::system_clock::now().time_since_epoch()};
  VirtualClock clock(MonoTime{1h}, now);  // realtime near the kernel's, for the stamp check
  UdpTransportOptions options = LoopbackOptions();
  options.idle_close = 30s;
  options.tx_stamp_timeout = 1h;
  UdpTransport transport(clock, options);
  ASSERT_TRUE(transport.OpenNic(0).ok);
  ASSERT_TRUE(transport.OpenNic(1).ok);
  const std::uint8_t payload[50] = {};
  const std::uint16_t dst_port = options.dst_port;
  std::uint64_t sequence = 0;
  const auto send = [&](std::uint16_t port) {
    return transport.Send(ProbeOrder{0, 1, port, dst_port, ++sequence, {}, 0}, payload).status;
  };
  // Monotonic time jumps; the wall clock stays the kernel's, for the stamp check.
  const auto advance = [&](std::chrono::nanoseconds by) {
    clock.Advance(by);
    clock.SetRealtime(WallTime{std::chrono::system_clock::now().time_since_epoch()});
  };
  std::vector<TransportEvent> events;
  const auto poll_stamps = [&](std::uint64_t want) {
    for (int i = 0; i < 100 && transport.counters(0).tx_stamps < want; ++i) {
      epoll_event ready{};
      ::epoll_wait(transport.ReadyFd(), &ready, 1, 10);
      transport.Poll(events, 64);
    }
    return transport.counters(0).tx_stamps;
  };
  ASSERT_EQ(send(50010), SendStatus::kOk);
  ASSERT_EQ(send(50011), SendStatus::kOk);
  ASSERT_EQ(poll_stamps(2), 2U);
  EXPECT_EQ(transport.send_sockets(0), 2U);
  advance(20s);
  ASSERT_EQ(send(50011), SendStatus::kOk);  // keeps 50011 busy
  ASSERT_EQ(poll_stamps(3), 3U);
  advance(15s);
  transport.Sweep();
  EXPECT_EQ(transport.send_sockets(0), 1U);  // 50010 idle for 35 s: closed
  EXPECT_EQ(transport.counters(0).sockets_closed, 1U);

  ASSERT_EQ(send(50012), SendStatus::kOk);  // its stamp is not read yet
  advance(40s);
  transport.Sweep();
  EXPECT_EQ(transport.send_sockets(0), 1U);  // 50011 closed, 50012 waits for its stamp
  ASSERT_EQ(poll_stamps(4), 4U);
  transport.Sweep();
  EXPECT_EQ(transport.send_sockets(0), 0U);
  EXPECT_EQ(transport.counters(0).sockets_opened, 3U);
  EXPECT_EQ(transport.counters(0).tx_stamps_lost, 0U);
}

}  // namespace
}  // namespace hostmesh::agent::udp
