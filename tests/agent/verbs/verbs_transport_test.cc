#include "agent/verbs/verbs_transport.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "agent/verbs/device_discovery.h"
#include "common/base/clock.h"

namespace hostmesh::agent::verbs {
namespace {

VerbsTransportOptions TwoNicsOn(const std::string& device, std::uint8_t gid_index) {
  VerbsTransportOptions options;
  // No address: both NICs share one device, any RoCEv2 GID of it goes.
  options.nics = {{"nic0", device, 1, gid_index, ""}, {"nic1", device, 1, gid_index, ""}};
  return options;
}

std::string EnvOr(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// --- Device-independent: what every host without RDMA sees. ---

TEST(VerbsTransportNoDevice, OpenFailsWithAClearReasonAndNothingElseBreaks) {
  auto devices = ListRdmaDevices();
  ASSERT_TRUE(devices.ok());
  if (!devices.value().empty()) GTEST_SKIP() << "this host has RDMA devices";

  SystemClock clock;
  VerbsTransport transport(clock, TwoNicsOn("mlx5_0", 3));
  const OpenResult open = transport.OpenNic(0);
  EXPECT_FALSE(open.ok);
  EXPECT_EQ(open.error, "no RDMA device: ibv_get_device_list returned 0 devices");
  EXPECT_FALSE(transport.is_open(0));
  EXPECT_FALSE(transport.OpenNic(7).ok);  // not in the NIC list

  const std::vector<std::uint8_t> payload(50, 0xAB);
  const SendResult sent = transport.Send(ProbeOrder{0, 1, 50000, 4791, 1, {}, 0}, payload);
  EXPECT_EQ(sent.status, SendStatus::kFailed);
  EXPECT_EQ(sent.error, ENOTCONN);
  EXPECT_EQ(transport.nic_stats(0).sends_failed, 1u);

  std::vector<TransportEvent> events;
  EXPECT_EQ(transport.Poll(events, 16), 0u);
  EXPECT_GE(transport.ReadyFd(), 0);
  EXPECT_EQ(transport.clock_state(0).mode, CompletionTimestampMode::kNone);
}

// --- Needs a device (soft-RoCE under QEMU, or a real RNIC). ---

class VerbsTransportDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto devices = ListRdmaDevices();
    ASSERT_TRUE(devices.ok()) << devices.error().message;
    if (devices.value().empty()) {
      GTEST_SKIP() << "no RDMA device: ibv_get_device_list returned 0 devices";
    }
    device_ = EnvOr("HOSTMESH_TEST_RDMA_DEVICE", devices.value().front().name);
    // rxe: index 1 is the RoCEv2 link-local GID; set this for an IPv4 GID.
    gid_index_ = static_cast<std::uint8_t>(std::stoi(EnvOr("HOSTMESH_TEST_RDMA_GID", "1")));
  }

  // Polls until `want` events arrived or a second passed (real hardware).
  static void PollFor(VerbsTransport& transport, std::vector<TransportEvent>& events,
                      std::size_t want) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{1};
    while (events.size() < want && std::chrono::steady_clock::now() < deadline) {
      transport.Poll(events, 64);
    }
  }

  // Address handles are built on the transport's thread: wait (on its ready
  // fd) until `nic` has `want` of them, or five seconds passed.
  static void WaitForHandles(VerbsTransport& transport, NicId nic, std::uint64_t want) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{5};
    std::vector<TransportEvent> ignored;
    while (transport.nic_stats(nic).address_handles_created < want &&
           std::chrono::steady_clock::now() < deadline) {
      pollfd fd{transport.ReadyFd(), POLLIN, 0};
      ::poll(&fd, 1, 100);
      transport.Poll(ignored, 64);
    }
  }

  std::string device_;
  std::uint8_t gid_index_ = 1;
  SystemClock clock_;
};

TEST_F(VerbsTransportDeviceTest, ProbeTravelsBetweenTwoQueuePairsWithFourTimestamps) {
  VerbsTransport transport(clock_, TwoNicsOn(device_, gid_index_));
  const OpenResult a = transport.OpenNic(0);
  ASSERT_TRUE(a.ok) << a.error;
  const OpenResult b = transport.OpenNic(1);
  ASSERT_TRUE(b.ok) << b.error;
  EXPECT_NE(transport.qp_num(0), transport.qp_num(1));
  const std::vector<std::uint16_t> ports = {50000};
  transport.PrepareSourcePorts(0, ports);
  WaitForHandles(transport, 0, 1);

  std::vector<std::uint8_t> payload(50);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i);
  const SendResult sent = transport.Send(ProbeOrder{0, 1, 50000, 4791, 1, {}, 0}, payload);
  ASSERT_EQ(sent.status, SendStatus::kOk) << sent.error;
  EXPECT_TRUE(sent.nic_send_pending);
  EXPECT_TRUE(sent.app_send.known());

  std::vector<TransportEvent> events;
  PollFor(transport, events, 2);
  ASSERT_EQ(events.size(), 2u);
  const TransportEvent* received = nullptr;
  const TransportEvent* send_ts = nullptr;
  for (const auto& e : events) {
    if (e.kind == TransportEvent::Kind::kReceived) received = &e;
    if (e.kind == TransportEvent::Kind::kSendTimestamp) send_ts = &e;
  }
  ASSERT_NE(received, nullptr);
  ASSERT_NE(send_ts, nullptr);
  EXPECT_EQ(received->nic, 1u);
  EXPECT_EQ(received->payload, payload);
  EXPECT_EQ(send_ts->nic, 0u);
  EXPECT_EQ(send_ts->sequence, 1u);
  EXPECT_EQ(send_ts->nic_time.source, a.capabilities.send_timestamps);
  EXPECT_EQ(received->nic_time.source, b.capabilities.recv_timestamps);
  EXPECT_LE(received->nic_time.ns,
            received->app_time.ns + 1'000'000);  // (3) before (4), give or take the fit
  EXPECT_EQ(transport.nic_stats(0).address_handles_created, 1u);
}

TEST_F(VerbsTransportDeviceTest, OneAddressHandlePerDestinationAndSourcePort) {
  VerbsTransport transport(clock_, TwoNicsOn(device_, gid_index_));
  ASSERT_TRUE(transport.OpenNic(0).ok);
  ASSERT_TRUE(transport.OpenNic(1).ok);
  // Built ahead, off the send path: the sends below create none.
  const std::vector<std::uint16_t> ports = {50000, 50001, 65535};
  transport.PrepareSourcePorts(0, ports);
  WaitForHandles(transport, 0, 3);
  const std::vector<std::uint8_t> payload(50, 1);
  std::uint64_t seq = 0;
  for (const std::uint16_t port : std::vector<std::uint16_t>{50000, 50001, 50000, 50001, 65535}) {
    ASSERT_EQ(transport.Send(ProbeOrder{0, 1, port, 4791, ++seq, {}, 0}, payload).status,
              SendStatus::kOk);
  }
  EXPECT_EQ(transport.nic_stats(0).address_handles_created, 3u);
  EXPECT_EQ(transport.nic_stats(0).sends_waiting_for_ah, 0u);
  // A port the flow label cannot express is refused, not sent on another port.
  EXPECT_EQ(transport.Send(ProbeOrder{0, 1, 4000, 4791, ++seq, {}, 0}, payload).status,
            SendStatus::kFailed);
  std::vector<TransportEvent> events;
  PollFor(transport, events, 10);
  EXPECT_EQ(events.size(), 10u);
}

}  // namespace
}  // namespace hostmesh::agent::verbs
