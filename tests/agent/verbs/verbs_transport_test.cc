#include "agent/verbs/verbs_transport.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
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

// --- Needs a device: soft-RoCE in the guest of tests/rdma (which runs this
// binary there against rxe0..rxe2), or a real RNIC. ---

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

class VerbsTransportDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto devices = ListRdmaDevices();
    ASSERT_TRUE(devices.ok()) << devices.error().message;
    if (devices.value().empty()) {
      GTEST_SKIP() << "no RDMA device: ibv_get_device_list returned 0 devices";
    }
    // Two NICs as the agent has them: a device each (the first two listed,
    // or HOSTMESH_TEST_RDMA_DEVICES=a,b), one device twice when it is alone.
    std::vector<std::string> names = Split(EnvOr("HOSTMESH_TEST_RDMA_DEVICES", ""));
    for (const auto& device : devices.value()) {
      if (names.size() < 2) names.push_back(device.name);
    }
    if (names.size() < 2) names.push_back(names.front());
    // rxe: index 1 is the NIC's IPv4 RoCEv2 GID (mlx5 usually 3).
    const auto gid = static_cast<std::uint8_t>(std::stoi(EnvOr("HOSTMESH_TEST_RDMA_GID", "1")));
    options_.nics = {{"nic0", names[0], 1, gid, ""}, {"nic1", names[1], 1, gid, ""}};
  }

  // Polls until `done` or `seconds` passed, waiting on the ready fd between
  // polls (real hardware, real time).
  template <typename Done>
  static bool PollUntil(VerbsTransport& transport, std::vector<TransportEvent>& events, Done done,
                        int seconds = 5) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{seconds};
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      pollfd fd{transport.ReadyFd(), POLLIN, 0};
      ::poll(&fd, 1, 20);
      transport.Poll(events, 64);
    }
    return true;
  }

  // Opens both NICs and waits until nic0 has an address handle to nic1 for
  // each of `ports` (the device's own ports when it fixes them per QP).
  std::vector<std::uint16_t> OpenBoth(VerbsTransport& transport, std::size_t port_count) {
    const OpenResult a = transport.OpenNic(0);
    EXPECT_TRUE(a.ok) << a.error;
    const OpenResult b = transport.OpenNic(1);
    EXPECT_TRUE(b.ok) << b.error;
    caps_ = a.capabilities;
    recv_caps_ = b.capabilities;
    std::vector<std::uint16_t> ports;
    if (a.source_ports.empty()) {
      ports = {50000, 50001, 65535};
    } else {
      ports = a.source_ports;  // a per-QP device: only these leave its wire
    }
    ports.resize(std::min(ports.size(), port_count));
    transport.PrepareSourcePorts(0, ports);
    std::vector<TransportEvent> ignored;
    const std::uint64_t want = a.source_ports.empty() ? ports.size() : 1;
    EXPECT_TRUE(PollUntil(transport, ignored,
                          [&] { return transport.nic_stats(0).address_handles_created >= want; }))
        << "address handles from nic0 to nic1: " << transport.nic_stats(0).address_handles_created
        << " of " << want << " built in 5 s, errors "
        << transport.nic_stats(0).address_handle_errors;
    return ports;
  }

  // Sends one probe nic0 -> nic1 and returns its receive event (nullopt when
  // none came within 5 s).
  std::optional<TransportEvent> RoundTrip(VerbsTransport& transport, std::uint16_t port,
                                          std::uint64_t sequence, SendResult* sent_out = nullptr) {
    std::vector<std::uint8_t> payload(50);
    for (std::size_t i = 0; i < payload.size(); ++i) {
      payload[i] = static_cast<std::uint8_t>(i + sequence);
    }
    const SendResult sent = transport.Send(ProbeOrder{0, 1, port, 4791, sequence, {}, 0}, payload);
    if (sent_out != nullptr) *sent_out = sent;
    EXPECT_EQ(sent.status, SendStatus::kOk) << "error " << sent.error;
    if (sent.status != SendStatus::kOk) return std::nullopt;
    // Both completions: the receive on nic1's CQ and, when the send's stamp
    // comes later, the send on nic0's (either may be polled first).
    std::vector<TransportEvent> events;
    std::optional<TransportEvent> received;
    send_ts_.reset();
    PollUntil(transport, events, [&] {
      for (const auto& e : events) {
        if (e.kind == TransportEvent::Kind::kSendTimestamp && e.sequence == sequence) send_ts_ = e;
        if (e.kind == TransportEvent::Kind::kReceived && e.payload == payload) received = e;
      }
      return received && (send_ts_ || !sent.nic_send_pending);
    });
    return received;
  }

  VerbsTransportOptions options_;
  SystemClock clock_;
  NicCapabilities caps_;
  NicCapabilities recv_caps_;
  std::optional<TransportEvent> send_ts_;
};

TEST_F(VerbsTransportDeviceTest, ProbeTravelsBetweenTwoQueuePairsWithFourTimestamps) {
  VerbsTransport transport(clock_, options_);
  const std::vector<std::uint16_t> ports = OpenBoth(transport, 1);
  ASSERT_FALSE(ports.empty());
  if (options_.nics[0].rdma_device == options_.nics[1].rdma_device) {
    EXPECT_NE(transport.qp_num(0), transport.qp_num(1));  // QPNs are per device
  }
  SendResult sent;
  const std::optional<TransportEvent> received = RoundTrip(transport, ports[0], 1, &sent);
  ASSERT_TRUE(received.has_value()) << "the probe never arrived";
  ASSERT_TRUE(send_ts_.has_value()) << "no send completion stamp";
  EXPECT_TRUE(sent.nic_send_pending);
  EXPECT_EQ(received->nic, 1u);
  EXPECT_EQ(send_ts_->nic, 0u);
  // Each stamp says where it came from: the NIC clock where the device stamps
  // completions, the poll time where it does not (soft-RoCE has no
  // completion timestamps: then (2) and (3) are USER, and that is checked).
  EXPECT_EQ(send_ts_->nic_time.source, caps_.send_timestamps);
  EXPECT_EQ(received->nic_time.source, recv_caps_.recv_timestamps);
  if (caps_.send_timestamps == TimestampSource::kUser) {
    std::cout << "[   INFO   ] " << options_.nics[0].rdma_device
              << " has no completion timestamps: (2) and (3) are poll times (USER)\n";
  }
  // (1) <= (2) and (3) <= (4); (2) <= (3) only in one clock, so with a fit's
  // error (1 ms) between a NIC clock and the host's.
  const std::int64_t slack = caps_.send_timestamps == TimestampSource::kHardware ? 1'000'000 : 0;
  EXPECT_TRUE(sent.app_send.known());
  EXPECT_LE(sent.app_send.ns, send_ts_->nic_time.ns + slack);
  EXPECT_LE(received->nic_time.ns, received->app_time.ns + slack);
  EXPECT_LE(sent.app_send.ns, received->app_time.ns);
  EXPECT_GT(received->app_time.ns - sent.app_send.ns, 0);
  EXPECT_LT(received->app_time.ns - sent.app_send.ns, 5'000'000'000);
}

TEST_F(VerbsTransportDeviceTest, AddressHandlesFollowHowTheDeviceSetsTheSourcePort) {
  VerbsTransport transport(clock_, options_);
  const std::vector<std::uint16_t> ports = OpenBoth(transport, 3);
  ASSERT_EQ(ports.size(), 3u);
  const bool per_qp = transport.source_port_mode(0) == SourcePortMode::kPerQp;
  const std::uint64_t built = transport.nic_stats(0).address_handles_created;
  // Built ahead, off the send path: the sends below create none. A flow-label
  // device has one per (destination, port); a per-QP device one per
  // destination, whatever the port.
  EXPECT_EQ(built, per_qp ? 1u : 3u);
  std::uint64_t seq = 0;
  for (const std::size_t i : {0, 1, 0, 1, 2}) {
    ASSERT_TRUE(RoundTrip(transport, ports[i], ++seq).has_value()) << "port " << ports[i];
  }
  EXPECT_EQ(transport.nic_stats(0).address_handles_created, built);
  EXPECT_EQ(transport.nic_stats(0).sends_waiting_for_ah, 0u);
  // A port the device cannot send from is refused, not sent on another port.
  std::uint16_t foreign = 4000;
  if (per_qp) {
    while (std::find(ports.begin(), ports.end(), foreign) != ports.end()) ++foreign;
  }
  const std::vector<std::uint8_t> payload(50, 1);
  EXPECT_EQ(transport.Send(ProbeOrder{0, 1, foreign, 4791, ++seq, {}, 0}, payload).status,
            SendStatus::kFailed);
}

TEST_F(VerbsTransportDeviceTest, AReceiveQpForcedIntoErrorIsResetAndReceivesAgain) {
  VerbsTransport transport(clock_, options_);
  const std::vector<std::uint16_t> ports = OpenBoth(transport, 1);
  ASSERT_TRUE(RoundTrip(transport, ports[0], 1).has_value());
  const std::uint32_t qpn = transport.qp_num(1);
  ASSERT_EQ(transport.ForceQpError(1, 0), "");
  // The flushed receives are error completions; the transport queries the QP,
  // finds it in ERR and resets it on a later Poll, reposting every receive.
  std::vector<TransportEvent> events;
  const NicHealth* health = transport.nic_health(1);
  ASSERT_NE(health, nullptr);
  EXPECT_TRUE(PollUntil(transport, events, [&] { return health->counters().qp_recoveries >= 1; }))
      << "errors found " << health->counters().qp_errors_found << ", recovery failures "
      << health->counters().qp_recovery_failures;
  EXPECT_EQ(health->counters().qp_errors_found, 1u);
  EXPECT_EQ(transport.qp_num(1), qpn);  // the same QP, back in RTS
  EXPECT_TRUE(health->qp_ready(0));
  for (std::uint64_t seq = 2; seq < 6; ++seq) {
    EXPECT_TRUE(RoundTrip(transport, ports[0], seq).has_value()) << "probe " << seq;
  }
  EXPECT_EQ(transport.ForceQpError(1, 99).empty(), false);  // no such QP: refused
}

TEST_F(VerbsTransportDeviceTest, ADeviceFatalEventClosesTheNicAndReopensItWithNewQueuePairs) {
  VerbsTransport transport(clock_, options_);
  std::vector<std::uint16_t> ports = OpenBoth(transport, 1);
  ASSERT_TRUE(RoundTrip(transport, ports[0], 1).has_value());
  const std::uint32_t qpn = transport.qp_num(0);
  // The event is queued on nic0's async events and read by the reader, as
  // one from the device's async fd would be.
  ASSERT_EQ(transport.ForceDeviceError(0), "");
  const NicHealth* health = transport.nic_health(0);
  ASSERT_NE(health, nullptr);
  EXPECT_EQ(health->counters().events[static_cast<std::size_t>(AsyncEventKind::kDeviceFatal)], 1u);
  EXPECT_FALSE(health->can_send());
  const std::vector<std::uint8_t> payload(50, 7);
  EXPECT_EQ(transport.Send(ProbeOrder{0, 1, ports[0], 4791, 2, {}, 0}, payload).status,
            SendStatus::kFailed);
  EXPECT_EQ(transport.nic_stats(0).sends_nic_down, 1u);

  std::vector<TransportEvent> events;
  std::vector<NicId> reopened;
  EXPECT_TRUE(PollUntil(transport, events, [&] {
    for (NicId nic : transport.TakeReopened()) reopened.push_back(nic);
    return !reopened.empty();
  }));
  EXPECT_EQ(reopened, std::vector<NicId>{0});
  EXPECT_EQ(health->counters().reopens, 1u);
  EXPECT_TRUE(health->can_send());
  EXPECT_NE(transport.qp_num(0), qpn);  // a new context, CQ and QPs
  // What the agent does on a reopen: asks for the NIC's ports again (new
  // ones on a per-QP device) and probes on.
  const OpenResult again = transport.OpenNic(0);
  ASSERT_TRUE(again.ok) << again.error;
  if (!again.source_ports.empty()) ports = {again.source_ports.front()};
  transport.PrepareSourcePorts(0, ports);
  std::optional<TransportEvent> received;
  for (std::uint64_t seq = 3; seq < 10 && !received; ++seq) {
    // The new address handle is built on the builder thread: until then the
    // send is kRetryLater, which RoundTrip does not take as a probe.
    PollUntil(transport, events,
              [&] { return transport.nic_stats(0).address_handles_created >= 2; });
    received = RoundTrip(transport, ports[0], seq);
  }
  EXPECT_TRUE(received.has_value()) << "no probe crossed after the reopen";
}

}  // namespace
}  // namespace hostmesh::agent::verbs
