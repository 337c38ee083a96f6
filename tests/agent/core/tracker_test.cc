#include "agent/core/tracker.h"

#include <gtest/gtest.h>

#include <vector>

namespace hostmesh::agent {
namespace {

using namespace std::chrono_literals;

const MonoTime kT0{100s};

class agent_tracker_fixture : public ::testing::Test {
 protected:
  explicit agent_tracker_fixture(std::uint32_t capacity = 1024)
      : tracker_({4, 500ms, capacity}, [this](const ProbeResult& r) { results_.push_back(r); }) {}

  static SentProbe Probe(NicId src, NicId dst, std::uint64_t seq, bool nic_send_pending = false) {
    SentProbe probe;
    probe.order.src = src;
    probe.order.dst = dst;
    probe.order.src_port = static_cast<std::uint16_t>(50000 + seq % 16);
    probe.order.dst_port = 4791;
    probe.order.sequence = seq;
    probe.send_time_ns = 1'000'000'000 + static_cast<std::int64_t>(seq);
    probe.app_send = {2'000'000'000, TimestampSource::kUser};
    if (!nic_send_pending) probe.nic_send = {2'000'000'100, TimestampSource::kKernel};
    probe.nic_send_pending = nic_send_pending;
    probe.payload_bytes = 50;
    return probe;
  }
  static ProbeHeader Header(NicId src, NicId dst, std::uint64_t seq) {
    ProbeHeader header;
    header.src_nic = src;
    header.dst_nic = dst;
    header.sequence = seq;
    return header;
  }
  ReceiveOutcome Receive(NicId src, NicId dst, std::uint64_t seq, MonoTime now) {
    return tracker_.OnReceive(dst, Header(src, dst, seq), {2'000'010'000, TimestampSource::kKernel},
                              {2'000'020'000, TimestampSource::kUser}, now);
  }

  Tracker tracker_;
  std::vector<ProbeResult> results_;
};

TEST_F(agent_tracker_fixture, AReceiveBeforeTheDeadlineCompletesTheProbe) {
  ASSERT_TRUE(tracker_.OnSend(Probe(0, 1, 1), kT0));
  EXPECT_EQ(tracker_.pending(), 1U);
  EXPECT_EQ(Receive(0, 1, 1, kT0 + 100ms), ReceiveOutcome::kReceived);
  ASSERT_EQ(results_.size(), 1U);
  const ProbeResult& r = results_[0];
  EXPECT_EQ(r.src_nic, 0U);
  EXPECT_EQ(r.dst_nic, 1U);
  EXPECT_EQ(r.src_port, 50001);
  EXPECT_EQ(r.dst_port, 4791);
  EXPECT_EQ(r.sequence, 1U);
  EXPECT_EQ(r.send_time_ns, 1'000'000'001);
  EXPECT_EQ(r.app_send_ns, 2'000'000'000);
  EXPECT_EQ(r.nic_send_ns, 2'000'000'100);
  EXPECT_EQ(r.nic_recv_ns, 2'000'010'000);
  EXPECT_EQ(r.app_recv_ns, 2'000'020'000);
  EXPECT_EQ(r.send_timestamp_source, TimestampSource::kKernel);
  EXPECT_EQ(r.recv_timestamp_source, TimestampSource::kKernel);
  EXPECT_FALSE(r.timeout);
  EXPECT_EQ(r.payload_bytes, 50U);
  EXPECT_EQ(tracker_.pending(), 0U);

  tracker_.Poll(kT0 + 10s);
  EXPECT_EQ(results_.size(), 1U);  // decided once
  const PairCounters& c = tracker_.counters(0, 1);
  EXPECT_EQ(c.sent, 1U);
  EXPECT_EQ(c.received, 1U);
  EXPECT_EQ(c.timed_out, 0U);
}

TEST_F(agent_tracker_fixture, NoReceiveByTheDeadlineIsATimeout) {
  tracker_.OnSend(Probe(2, 3, 1), kT0);
  EXPECT_EQ(tracker_.NextDeadline(), kT0 + 500ms);
  tracker_.Poll(kT0 + 500ms - 1ns);
  EXPECT_TRUE(results_.empty());
  tracker_.Poll(kT0 + 500ms);
  ASSERT_EQ(results_.size(), 1U);
  EXPECT_TRUE(results_[0].timeout);
  EXPECT_EQ(results_[0].nic_send_ns, 2'000'000'100);  // what is known stays
  EXPECT_EQ(results_[0].nic_recv_ns, 0);
  EXPECT_EQ(results_[0].app_recv_ns, 0);
  EXPECT_EQ(results_[0].recv_timestamp_source, TimestampSource::kUnspecified);
  EXPECT_EQ(tracker_.counters(2, 3).timed_out, 1U);
  EXPECT_FALSE(tracker_.NextDeadline().has_value());
}

TEST_F(agent_tracker_fixture, AReceiveAfterTheTimeoutIsLateAndTheTimeoutStands) {
  tracker_.OnSend(Probe(0, 1, 1), kT0);
  tracker_.Poll(kT0 + 600ms);
  EXPECT_EQ(Receive(0, 1, 1, kT0 + 700ms), ReceiveOutcome::kLate);
  ASSERT_EQ(results_.size(), 1U);
  EXPECT_TRUE(results_[0].timeout);
  const PairCounters& c = tracker_.counters(0, 1);
  EXPECT_EQ(c.timed_out, 1U);
  EXPECT_EQ(c.late, 1U);
  EXPECT_EQ(c.received, 0U);
  // Once more: now a duplicate of the late one.
  EXPECT_EQ(Receive(0, 1, 1, kT0 + 800ms), ReceiveOutcome::kDuplicate);
  EXPECT_EQ(c.late, 1U);
  EXPECT_EQ(c.duplicate, 1U);
}

TEST_F(agent_tracker_fixture, AReceivePastTheDeadlineIsLateEvenBeforePoll) {
  tracker_.OnSend(Probe(0, 1, 1), kT0);
  EXPECT_EQ(Receive(0, 1, 1, kT0 + 500ms), ReceiveOutcome::kLate);
  ASSERT_EQ(results_.size(), 1U);
  EXPECT_TRUE(results_[0].timeout);
  EXPECT_EQ(tracker_.counters(0, 1).timed_out, 1U);
  EXPECT_EQ(tracker_.counters(0, 1).late, 1U);
  tracker_.Poll(kT0 + 1s);
  EXPECT_EQ(results_.size(), 1U);
}

TEST_F(agent_tracker_fixture, DuplicatesAreCountedAndDropped) {
  tracker_.OnSend(Probe(0, 1, 1), kT0);
  Receive(0, 1, 1, kT0 + 1ms);
  EXPECT_EQ(Receive(0, 1, 1, kT0 + 2ms), ReceiveOutcome::kDuplicate);
  EXPECT_EQ(Receive(0, 1, 1, kT0 + 3ms), ReceiveOutcome::kDuplicate);
  EXPECT_EQ(results_.size(), 1U);
  EXPECT_EQ(tracker_.counters(0, 1).duplicate, 2U);
  EXPECT_EQ(tracker_.counters(0, 1).received, 1U);
}

TEST_F(agent_tracker_fixture, UnknownSequencesAreCountedAndDropped) {
  tracker_.OnSend(Probe(0, 1, 1), kT0);
  tracker_.OnSend(Probe(0, 1, 3), kT0);
  EXPECT_EQ(Receive(0, 1, 4, kT0), ReceiveOutcome::kUnknown);  // never sent yet
  EXPECT_EQ(Receive(0, 1, 0, kT0), ReceiveOutcome::kUnknown);  // never a sequence
  EXPECT_EQ(Receive(0, 1, 2, kT0), ReceiveOutcome::kUnknown);  // a gap: never recorded
  EXPECT_EQ(Receive(2, 1, 1, kT0), ReceiveOutcome::kUnknown);  // NIC 2 sent nothing
  EXPECT_EQ(tracker_.counters(0, 1).unknown, 3U);
  EXPECT_EQ(tracker_.counters(2, 1).unknown, 1U);
  EXPECT_EQ(tracker_.OnReceive(1, Header(9, 1, 1), {}, {}, kT0), ReceiveOutcome::kUnknown);
  EXPECT_EQ(tracker_.tracker_counters().unknown_source, 1U);
  EXPECT_TRUE(results_.empty());
}

TEST_F(agent_tracker_fixture, AProbeArrivingOnTheWrongNicIsMisdelivered) {
  tracker_.OnSend(Probe(0, 1, 1), kT0);
  EXPECT_EQ(tracker_.OnReceive(2, Header(0, 1, 1), {}, {}, kT0 + 1ms),
            ReceiveOutcome::kMisdelivered);
  EXPECT_EQ(tracker_.counters(0, 1).misdelivered, 1U);
  tracker_.Poll(kT0 + 1s);
  ASSERT_EQ(results_.size(), 1U);
  EXPECT_TRUE(results_[0].timeout);  // its real destination never got it
}

TEST_F(agent_tracker_fixture, ASendTimestampAfterTheReceiveCompletesTheResult) {
  tracker_.OnSend(Probe(0, 1, 1, /*nic_send_pending=*/true), kT0);
  EXPECT_EQ(Receive(0, 1, 1, kT0 + 1ms), ReceiveOutcome::kReceived);
  EXPECT_TRUE(results_.empty());  // waits for (2)
  EXPECT_EQ(tracker_.counters(0, 1).received, 1U);
  tracker_.OnSendTimestamp(0, 1, {2'000'000'200, TimestampSource::kHardware});
  ASSERT_EQ(results_.size(), 1U);
  EXPECT_FALSE(results_[0].timeout);
  EXPECT_EQ(results_[0].nic_send_ns, 2'000'000'200);
  EXPECT_EQ(results_[0].send_timestamp_source, TimestampSource::kHardware);
  EXPECT_EQ(tracker_.pending(), 0U);
}

TEST_F(agent_tracker_fixture, ASendTimestampBeforeTheReceiveIsKept) {
  tracker_.OnSend(Probe(0, 1, 1, true), kT0);
  tracker_.OnSendTimestamp(0, 1, {2'000'000'300, TimestampSource::kHardware});
  EXPECT_TRUE(results_.empty());
  Receive(0, 1, 1, kT0 + 1ms);
  ASSERT_EQ(results_.size(), 1U);
  EXPECT_EQ(results_[0].nic_send_ns, 2'000'000'300);
}

TEST_F(agent_tracker_fixture, AMissingSendTimestampIsGivenUpAtTheDeadline) {
  tracker_.OnSend(Probe(0, 1, 1, true), kT0);
  Receive(0, 1, 1, kT0 + 1ms);
  tracker_.Poll(kT0 + 499ms);
  EXPECT_TRUE(results_.empty());
  tracker_.Poll(kT0 + 500ms);
  ASSERT_EQ(results_.size(), 1U);
  EXPECT_FALSE(results_[0].timeout);  // it was received
  EXPECT_EQ(results_[0].nic_send_ns, 0);
  EXPECT_EQ(results_[0].send_timestamp_source, TimestampSource::kUnspecified);
  EXPECT_EQ(results_[0].nic_recv_ns, 2'000'010'000);
  // Too late now: counted as stray.
  tracker_.OnSendTimestamp(0, 1, {1, TimestampSource::kHardware});
  tracker_.OnSendTimestamp(3, 77, {1, TimestampSource::kHardware});
  EXPECT_EQ(tracker_.tracker_counters().stray_send_reports, 2U);
  EXPECT_EQ(results_.size(), 1U);
}

TEST_F(agent_tracker_fixture, AFailedSendIsReportedAsASendFailureNotATimeout) {
  tracker_.OnSend(Probe(1, 2, 1), kT0);
  tracker_.OnSendFailed(1, 1);
  ASSERT_EQ(results_.size(), 1U);
  EXPECT_TRUE(results_[0].send_failed);
  EXPECT_FALSE(results_[0].timeout);
  EXPECT_EQ(results_[0].nic_recv_ns, 0);
  EXPECT_EQ(tracker_.counters(1, 2).send_failed, 1U);
  EXPECT_EQ(tracker_.counters(1, 2).timed_out, 0U);
  tracker_.Poll(kT0 + 1s);
  EXPECT_EQ(results_.size(), 1U);
  tracker_.OnSendFailed(1, 1);  // twice: stray
  EXPECT_EQ(tracker_.tracker_counters().stray_send_reports, 1U);
}

TEST_F(agent_tracker_fixture, SendsMustHaveIncreasingSequencesAndKnownNics) {
  EXPECT_TRUE(tracker_.OnSend(Probe(0, 1, 5), kT0));
  EXPECT_FALSE(tracker_.OnSend(Probe(0, 1, 5), kT0));
  EXPECT_FALSE(tracker_.OnSend(Probe(0, 1, 4), kT0));
  EXPECT_FALSE(tracker_.OnSend(Probe(4, 1, 6), kT0));
  EXPECT_FALSE(tracker_.OnSend(Probe(0, 4, 6), kT0));
  EXPECT_EQ(tracker_.tracker_counters().rejected_sends, 4U);
  EXPECT_EQ(tracker_.counters(0, 1).sent, 1U);
}

TEST_F(agent_tracker_fixture, NextDeadlineFollowsTheOldestOpenProbe) {
  EXPECT_FALSE(tracker_.NextDeadline().has_value());
  tracker_.OnSend(Probe(0, 1, 1), kT0);
  tracker_.OnSend(Probe(1, 0, 1), kT0 + 50ms);
  tracker_.OnSend(Probe(0, 1, 2), kT0 + 100ms);
  EXPECT_EQ(tracker_.NextDeadline(), kT0 + 500ms);
  Receive(0, 1, 1, kT0 + 120ms);
  EXPECT_EQ(tracker_.NextDeadline(), kT0 + 550ms);
  Receive(1, 0, 1, kT0 + 130ms);
  EXPECT_EQ(tracker_.NextDeadline(), kT0 + 600ms);
  tracker_.Poll(kT0 + 600ms);
  EXPECT_FALSE(tracker_.NextDeadline().has_value());
}

TEST(agent_tracker, CapacityCoversATimeoutAndAnEighth) {
  EXPECT_EQ(Tracker::CapacityFor(100ms, 500ms), 5U + 16U);
  EXPECT_EQ(Tracker::CapacityFor(1ms, 500ms), 500U + 62U);
  EXPECT_EQ(Tracker::CapacityFor(100us, 500ms), 5000U + 625U);
}

// Sends sequences 1..count from `src` to `dst`, one every `interval` from
// `now`, none answered, polling after each send; returns the time after the last.
MonoTime SendUnanswered(Tracker& tracker, NicId src, NicId dst, std::uint64_t count,
                        std::chrono::nanoseconds interval, MonoTime now) {
  for (std::uint64_t seq = 1; seq <= count; ++seq) {
    SentProbe probe;
    probe.order = {src, dst, 50000, 4791, seq, now, 0};
    tracker.OnSend(probe, now);
    tracker.Poll(now);
    now += interval;
  }
  return now;
}

// At 1000 probes/s, all lost and polled each millisecond: every probe times
// out at its deadline, none is evicted early by a send reusing its slot.
TEST(agent_tracker, UnansweredProbesAtOneMillisecondTimeOutWithoutEviction) {
  std::uint64_t timeouts = 0;
  Tracker tracker({1, 500ms, Tracker::CapacityFor(1ms, 500ms)},
                  [&](const ProbeResult& r) { timeouts += r.timeout ? 1 : 0; });
  const MonoTime now = SendUnanswered(tracker, 0, 0, 10'000, 1ms, kT0);
  EXPECT_EQ(tracker.counters(0, 0).evicted, 0U);
  EXPECT_LE(tracker.pending(), 501U);
  tracker.Poll(now + 1s);
  EXPECT_EQ(timeouts, 10'000U);
}

TEST(agent_tracker, AReceiveAnEighthOfATimeoutLateIsLateNotUnknown) {
  Tracker tracker({2, 500ms, Tracker::CapacityFor(1ms, 500ms)}, [](const ProbeResult&) {});
  const MonoTime now = SendUnanswered(tracker, 0, 1, 560, 1ms, kT0);
  ProbeHeader header;
  header.src_nic = 0;
  header.dst_nic = 1;
  header.sequence = 1;  // timed out at 500 ms, now 560 ms after its send
  EXPECT_EQ(tracker.OnReceive(1, header, {}, {}, now), ReceiveOutcome::kLate);
  // Its slot still holds it, so a copy is told apart as a duplicate.
  EXPECT_EQ(tracker.OnReceive(1, header, {}, {}, now), ReceiveOutcome::kDuplicate);
  EXPECT_EQ(tracker.counters(0, 1).late, 1U);
  EXPECT_EQ(tracker.counters(0, 1).duplicate, 1U);
  EXPECT_EQ(tracker.counters(0, 1).unknown, 0U);
}

TEST(agent_tracker, RejectsAPayloadLargerThanADatagram) {
  Tracker tracker({2, 500ms, 16}, [](const ProbeResult&) {});
  SentProbe probe;
  probe.order = {0, 1, 50000, 4791, 1, kT0, 0};
  probe.payload_bytes = 70'000;
  EXPECT_FALSE(tracker.OnSend(probe, kT0));
  EXPECT_EQ(tracker.tracker_counters().rejected_sends, 1U);
  EXPECT_EQ(tracker.pending(), 0U);
}

class agent_tracker_small_ring : public agent_tracker_fixture {
 protected:
  agent_tracker_small_ring() : agent_tracker_fixture(16) {}
};

TEST_F(agent_tracker_small_ring, ASendOntoAPendingSlotEvictsItAsATimeout) {
  for (std::uint64_t seq = 1; seq <= 16; ++seq) tracker_.OnSend(Probe(0, 1, seq), kT0);
  EXPECT_TRUE(results_.empty());
  tracker_.OnSend(Probe(0, 1, 17), kT0);  // reuses sequence 1's slot
  ASSERT_EQ(results_.size(), 1U);
  EXPECT_EQ(results_[0].sequence, 1U);
  EXPECT_TRUE(results_[0].timeout);
  EXPECT_EQ(tracker_.counters(0, 1).evicted, 1U);
  EXPECT_EQ(tracker_.counters(0, 1).timed_out, 1U);
  EXPECT_EQ(tracker_.pending(), 16U);
  // Its receive, older than the ring now, is late.
  EXPECT_EQ(Receive(0, 1, 1, kT0 + 1ms), ReceiveOutcome::kLate);
  EXPECT_EQ(Receive(0, 1, 2, kT0 + 1ms), ReceiveOutcome::kReceived);
}

TEST_F(agent_tracker_small_ring, ASequenceJumpWiderThanTheRingEvictsTheOpenProbes) {
  tracker_.OnSend(Probe(0, 1, 1), kT0);
  tracker_.OnSend(Probe(0, 1, 2), kT0);
  Receive(0, 1, 2, kT0 + 1ms);
  tracker_.OnSend(Probe(0, 1, 1'000'000'000), kT0 + 2ms);
  ASSERT_EQ(results_.size(), 2U);
  EXPECT_EQ(results_[1].sequence, 1U);
  EXPECT_TRUE(results_[1].timeout);
  EXPECT_EQ(tracker_.pending(), 1U);
  EXPECT_EQ(tracker_.NextDeadline(), kT0 + 502ms);
  tracker_.Poll(kT0 + 1s);
  EXPECT_EQ(results_.size(), 3U);
}

TEST(agent_tracker, AMillionUnansweredProbesAllTimeOutInConstantMemory) {
  std::uint64_t timeouts = 0;
  std::uint64_t other = 0;
  Tracker tracker({2, 500ms, Tracker::CapacityFor(100ms, 500ms)},
                  [&](const ProbeResult& r) { (r.timeout ? timeouts : other) += 1; });
  const std::size_t memory = tracker.MemoryBytes();
  const MonoTime now = SendUnanswered(tracker, 0, 1, 1'000'000, 100ms, kT0);
  EXPECT_EQ(tracker.MemoryBytes(), memory);
  EXPECT_LE(tracker.pending(), 6U);
  tracker.Poll(now + 1s);
  EXPECT_EQ(timeouts, 1'000'000U);
  EXPECT_EQ(other, 0U);
  EXPECT_EQ(tracker.counters(0, 1).timed_out, 1'000'000U);
  EXPECT_EQ(tracker.counters(0, 1).evicted, 0U);
  EXPECT_EQ(tracker.pending(), 0U);
  EXPECT_EQ(tracker.MemoryBytes(), memory);
}

TEST(agent_tracker, AMillionProbesAtOnceOverflowTheRingButNotMemory) {
  std::uint64_t timeouts = 0;
  Tracker tracker({2, 500ms, 1024}, [&](const ProbeResult& r) { timeouts += r.timeout ? 1 : 0; });
  const std::size_t memory = tracker.MemoryBytes();
  for (std::uint64_t seq = 1; seq <= 1'000'000; ++seq) {
    SentProbe probe;
    probe.order = {1, 0, 50000, 4791, seq, kT0, 0};
    tracker.OnSend(probe, kT0);
  }
  EXPECT_EQ(tracker.MemoryBytes(), memory);
  EXPECT_EQ(tracker.pending(), 1024U);
  EXPECT_EQ(tracker.counters(1, 0).evicted, 1'000'000U - 1024U);
  tracker.Poll(kT0 + 500ms);
  EXPECT_EQ(timeouts, 1'000'000U);
  EXPECT_EQ(tracker.counters(1, 0).timed_out, 1'000'000U);
  EXPECT_EQ(tracker.pending(), 0U);
}

TEST(agent_tracker, RejectsUnusableOptions) {
  const auto sink = [](const ProbeResult&) {};
  EXPECT_THROW(Tracker({2, 0ms, 16}, sink), std::invalid_argument);
  EXPECT_THROW(Tracker({2, 500ms, 16}, nullptr), std::invalid_argument);
  EXPECT_EQ(Tracker({2, 500ms, 1000}, sink).ring_capacity(), 1000U);
}

}  // namespace
}  // namespace hostmesh::agent
