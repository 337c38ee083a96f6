#include "tests/support/fake_transport.h"

#include <gtest/gtest.h>

#include <vector>

namespace hostmesh::agent {
namespace {

using namespace std::chrono_literals;

const MonoTime kT0{10s};
const WallTime kWall{1'704'067'200s};
constexpr std::int64_t kWallNs = 1'704'067'200'000'000'000;

ProbeOrder Order(NicId src, NicId dst, std::uint16_t sport, std::uint64_t seq) {
  return ProbeOrder{src, dst, sport, 4791, seq, kT0, 0};
}

class agent_fake_transport : public ::testing::Test {
 protected:
  agent_fake_transport() : clock_(kT0, kWall), transport_(clock_, Options()) {
    for (NicId nic = 0; nic < 3; ++nic) EXPECT_TRUE(transport_.OpenNic(nic).ok);
  }
  static FakeTransportOptions Options() {
    FakeTransportOptions options;
    options.num_nics = 3;
    return options;
  }
  std::vector<TransportEvent> PollAt(MonoTime at) {
    clock_.AdvanceTo(at);
    std::vector<TransportEvent> events;
    transport_.Poll(events, 100);
    return events;
  }

  VirtualClock clock_;
  FakeTransport transport_;
  const std::vector<std::uint8_t> payload_ = {1, 2, 3, 4};
};

TEST_F(agent_fake_transport, DeliversAfterTheDelaysWithFourTimestamps) {
  const SendResult sent = transport_.Send(Order(0, 2, 50000, 7), payload_);
  ASSERT_EQ(sent.status, SendStatus::kOk);
  EXPECT_EQ(sent.app_send, (Timestamp{kWallNs, TimestampSource::kUser}));
  EXPECT_TRUE(sent.nic_send_pending);
  EXPECT_EQ(transport_.NextEventTime(), kT0 + 2us);
  EXPECT_EQ(transport_.ReadyFd(), -1);

  EXPECT_TRUE(PollAt(kT0 + 1us).empty());
  std::vector<TransportEvent> events = PollAt(kT0 + 2us);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].kind, TransportEvent::Kind::kSendTimestamp);
  EXPECT_EQ(events[0].nic, 0U);
  EXPECT_EQ(events[0].sequence, 7U);
  EXPECT_EQ(events[0].nic_time, (Timestamp{kWallNs + 2'000, TimestampSource::kHardware}));

  EXPECT_TRUE(PollAt(kT0 + 16us).empty());
  events = PollAt(kT0 + 17us);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].kind, TransportEvent::Kind::kReceived);
  EXPECT_EQ(events[0].nic, 2U);
  EXPECT_EQ(events[0].nic_time, (Timestamp{kWallNs + 12'000, TimestampSource::kHardware}));
  EXPECT_EQ(events[0].app_time, (Timestamp{kWallNs + 17'000, TimestampSource::kUser}));
  EXPECT_EQ(events[0].payload, payload_);
  EXPECT_FALSE(transport_.NextEventTime().has_value());
  EXPECT_EQ(transport_.sent(), 1U);
  EXPECT_EQ(transport_.delivered(), 1U);
}

TEST_F(agent_fake_transport, DropsByPredicate) {
  transport_.SetDropRule([](NicId src, NicId dst, std::uint16_t sport) {
    return src == 0 && dst == 1 && sport == 50001;
  });
  transport_.Send(Order(0, 1, 50001, 1), payload_);
  transport_.Send(Order(0, 1, 50002, 2), payload_);
  transport_.Send(Order(1, 0, 50001, 1), payload_);
  int received = 0;
  for (const TransportEvent& event : PollAt(kT0 + 1s)) {
    if (event.kind == TransportEvent::Kind::kReceived) ++received;
  }
  EXPECT_EQ(received, 2);
  EXPECT_EQ(transport_.dropped(), 1U);
}

TEST_F(agent_fake_transport, DelayAndMutationArePerProbe) {
  transport_.SetDelayRule([](const ProbeOrder& order) {
    return std::chrono::milliseconds{static_cast<std::int64_t>(order.sequence)};
  });
  transport_.SetMutator(
      [](const ProbeOrder&, std::vector<std::uint8_t>& bytes) { bytes[0] ^= 0xFF; });
  transport_.Send(Order(0, 1, 50000, 3), payload_);
  EXPECT_TRUE(PollAt(kT0 + 3ms).size() == 1U);  // the send timestamp only
  const std::vector<TransportEvent> events = PollAt(kT0 + 3ms + 7us);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].payload[0], 0xFE);
}

TEST_F(agent_fake_transport, SynchronousSendTimestamps) {
  FakeTransportOptions options = Options();
  options.async_send_timestamps = false;
  options.send_source = TimestampSource::kKernel;
  FakeTransport transport(clock_, options);
  transport.OpenNic(0);
  transport.OpenNic(1);
  const SendResult sent = transport.Send(Order(0, 1, 50000, 1), payload_);
  EXPECT_FALSE(sent.nic_send_pending);
  EXPECT_EQ(sent.nic_send, (Timestamp{kWallNs + 2'000, TimestampSource::kKernel}));
  clock_.Advance(1s);
  std::vector<TransportEvent> events;
  EXPECT_EQ(transport.Poll(events, 10), 1U);
  EXPECT_EQ(events[0].kind, TransportEvent::Kind::kReceived);
}

TEST_F(agent_fake_transport, UnopenedAndFailingNics) {
  FakeTransport transport(clock_, Options());
  transport.FailOpen(1);
  EXPECT_FALSE(transport.OpenNic(1).ok);
  EXPECT_FALSE(transport.OpenNic(3).ok);
  EXPECT_TRUE(transport.OpenNic(0).ok);
  EXPECT_EQ(transport.Send(Order(2, 0, 1, 1), payload_).status, SendStatus::kFailed);
  // To a NIC nobody listens on: sent, then lost.
  EXPECT_EQ(transport.Send(Order(0, 1, 1, 1), payload_).status, SendStatus::kOk);
  EXPECT_EQ(transport.dropped(), 1U);

  transport.FailSends(0, SendStatus::kRetryLater);
  EXPECT_EQ(transport.Send(Order(0, 1, 1, 2), payload_).status, SendStatus::kRetryLater);
  transport.FailSends(0, SendStatus::kOk);
  EXPECT_EQ(transport.Send(Order(0, 1, 1, 3), payload_).status, SendStatus::kOk);
}

TEST_F(agent_fake_transport, PollHonoursItsLimitAndKeepsOrder) {
  for (std::uint64_t seq = 1; seq <= 5; ++seq) transport_.Send(Order(0, 1, 1, seq), payload_);
  clock_.Advance(1s);
  std::vector<TransportEvent> events;
  EXPECT_EQ(transport_.Poll(events, 3), 3U);
  EXPECT_EQ(transport_.Poll(events, 100), 7U);
  ASSERT_EQ(events.size(), 10U);
  // Send timestamps (at +2us) come before receives (at +17us), each in send order.
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(events[i].kind, TransportEvent::Kind::kSendTimestamp);
    EXPECT_EQ(events[i].sequence, i + 1);
  }
  for (std::size_t i = 5; i < 10; ++i) EXPECT_EQ(events[i].kind, TransportEvent::Kind::kReceived);
}

TEST_F(agent_fake_transport, InjectsRawPackets) {
  transport_.Inject(1, {0xDE, 0xAD}, kT0 + 5ms);
  EXPECT_EQ(transport_.NextEventTime(), kT0 + 5ms);
  const std::vector<TransportEvent> events = PollAt(kT0 + 5ms);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].nic, 1U);
  EXPECT_EQ(events[0].payload, (std::vector<std::uint8_t>{0xDE, 0xAD}));
}

}  // namespace
}  // namespace hostmesh::agent
