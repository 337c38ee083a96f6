// Scheduler + codec + fake transport + tracker, wired by the Prober, in
// virtual time: the agent's probe loop without sockets.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "agent/core/prober.h"
#include "tests/support/fake_transport.h"

namespace hostmesh::agent {
namespace {

using namespace std::chrono_literals;

const MonoTime kStart{1h};
constexpr std::uint64_t kBoot = 0xB007B007B007B007ULL;

// One agent, its pieces owned together.
struct Agent {
  Agent(std::uint32_t nics, FakeTransportOptions fake_options = {}, std::uint64_t seed = 1)
      : clock(kStart),
        scheduler(SchedulerOptions{nics, 100ms, 0.05, 4791, PortPoolOptions{}}, kStart, seed),
        tracker({nics, 500ms, Tracker::CapacityFor(100ms, 500ms)},
                [this](const ProbeResult& r) { results.push_back(r); }),
        transport(clock, WithNics(fake_options, nics)),
        prober(scheduler, tracker, transport, clock, ProberOptions{50, kBoot, 4096}) {
    for (NicId nic = 0; nic < nics; ++nic) EXPECT_TRUE(transport.OpenNic(nic).ok);
  }
  static FakeTransportOptions WithNics(FakeTransportOptions options, std::uint32_t nics) {
    options.num_nics = nics;
    return options;
  }

  // The I/O loop, with the sleep replaced by advancing the virtual clock to
  // the earlier of the prober's wake-up and the fake's next event. With
  // `tell_ready` the loop says, as the agent's does, whether its wait ended
  // on a ready event.
  void RunUntil(MonoTime end, bool tell_ready = false) {
    MonoTime wake = prober.RunOnce();
    for (;;) {
      MonoTime next = wake;
      bool ready = false;
      if (const auto event = transport.NextEventTime(); event && *event <= next) {
        next = *event;
        ready = true;
      }
      if (next > end) break;
      clock.AdvanceTo(std::max(next, clock.MonotonicNow()));
      wake = prober.RunOnce(!tell_ready || ready);
    }
    clock.AdvanceTo(end);
  }

  VirtualClock clock;
  std::vector<ProbeResult> results;
  Scheduler scheduler;
  Tracker tracker;
  FakeTransport transport;
  Prober prober;
};

TEST(agent_e2e, OneDroppedFiveTupleTimesOutAndNothingElse) {
  Agent agent(4);
  // A port that stays in NIC 1's pool for the whole minute (the last slot is
  // replaced only at the fourth rotation).
  const std::uint16_t bad_port = agent.scheduler.pool(1).ports().back();
  agent.transport.SetDropRule([&](NicId src, NicId dst, std::uint16_t sport) {
    return src == 1 && dst == 2 && sport == bad_port;
  });
  agent.RunUntil(kStart + 60s);

  std::size_t timeouts = 0;
  std::size_t received = 0;
  for (const ProbeResult& r : agent.results) {
    const bool bad = r.src_nic == 1 && r.dst_nic == 2 && r.src_port == bad_port;
    EXPECT_EQ(r.timeout, bad) << r.src_nic << "->" << r.dst_nic << " port " << r.src_port;
    if (r.timeout) {
      ++timeouts;
      continue;
    }
    ++received;
    // The fake's fixed delays: 10 us on the wire, 7 us of host processing.
    EXPECT_EQ(r.nic_recv_ns - r.nic_send_ns, 10'000);
    EXPECT_EQ((r.app_recv_ns - r.app_send_ns) - (r.nic_recv_ns - r.nic_send_ns), 7'000);
    EXPECT_EQ(r.send_timestamp_source, TimestampSource::kHardware);
    EXPECT_EQ(r.recv_timestamp_source, TimestampSource::kHardware);
    EXPECT_EQ(r.payload_bytes, 50U);
    EXPECT_GT(r.send_time_ns, 0);
  }
  EXPECT_GT(timeouts, 5U);  // about 600 / 3 / 16 = 12 expected
  const PairCounters totals = agent.tracker.Totals();
  EXPECT_EQ(totals.timed_out, timeouts);
  EXPECT_EQ(totals.received, received);
  EXPECT_EQ(totals.sent, received + timeouts + agent.tracker.pending());
  EXPECT_EQ(totals.late + totals.duplicate + totals.unknown + totals.evicted, 0U);
  EXPECT_EQ(agent.tracker.counters(1, 2).timed_out, timeouts);
  EXPECT_NEAR(static_cast<double>(totals.sent), 4 * 600.0, 4 * 6.0);
  for (NicId nic = 0; nic < 4; ++nic) {
    const ProberNicCounters& c = agent.prober.nic_counters(nic);
    EXPECT_EQ(c.send_errors, 0U);
    EXPECT_GT(c.received_with(DecodeStatus::kOk), 0U);
    EXPECT_EQ(c.received_with(DecodeStatus::kOk), [&] {
      std::uint64_t n = 0;
      for (NicId src = 0; src < 4; ++src) n += agent.tracker.counters(src, nic).received;
      return n;
    }());
  }
  // Results carry unique (src, sequence): every probe decided once.
  std::set<std::pair<NicId, std::uint64_t>> keys;
  for (const ProbeResult& r : agent.results) keys.insert({r.src_nic, r.sequence});
  EXPECT_EQ(keys.size(), agent.results.size());
}

TEST(agent_e2e, SendTimestampsArrivingAfterTheReceiveStillCompleteResults) {
  FakeTransportOptions options;
  options.send_report_delay = 50us;  // far after the 15 us flight + read
  Agent agent(3, options);
  agent.RunUntil(kStart + 10s);
  ASSERT_FALSE(agent.results.empty());
  for (const ProbeResult& r : agent.results) {
    EXPECT_FALSE(r.timeout);
    EXPECT_EQ(r.nic_recv_ns - r.nic_send_ns, 10'000);
  }
}

TEST(agent_e2e, ForeignCorruptAndStrayPacketsAreRejectedAndCounted) {
  Agent agent(3);
  // Corrupt every probe NIC 0 sends with sequence 10.
  agent.transport.SetMutator([](const ProbeOrder& order, std::vector<std::uint8_t>& bytes) {
    if (order.src == 0 && order.sequence == 10) bytes[45] ^= 0x04;
  });
  std::vector<std::uint8_t> stray(50);
  ProbeHeader header;
  header.src_nic = 1;
  header.dst_nic = 2;
  header.boot_id = kBoot ^ 1;  // an earlier boot of this agent
  header.sequence = 3;
  ASSERT_TRUE(EncodeProbe(header, stray));
  agent.transport.Inject(2, stray, kStart + 1s);
  agent.transport.Inject(2, {'G', 'E', 'T', ' '}, kStart + 2s);
  agent.transport.Inject(2, std::vector<std::uint8_t>(stray.begin(), stray.begin() + 20),
                         kStart + 3s);
  agent.RunUntil(kStart + 5s);

  const ProberNicCounters& rx2 = agent.prober.nic_counters(2);
  EXPECT_EQ(rx2.received_with(DecodeStatus::kWrongBoot), 1U);
  EXPECT_EQ(rx2.received_with(DecodeStatus::kForeign), 1U);
  EXPECT_EQ(rx2.received_with(DecodeStatus::kTruncated), 1U);
  std::uint64_t corrupt = 0;
  for (NicId nic = 0; nic < 3; ++nic) {
    corrupt += agent.prober.nic_counters(nic).received_with(DecodeStatus::kCorrupt);
  }
  EXPECT_EQ(corrupt, 1U);
  // The corrupted probe never counts as received: it times out.
  const auto it = std::find_if(agent.results.begin(), agent.results.end(),
                               [](const auto& r) { return r.src_nic == 0 && r.sequence == 10; });
  ASSERT_NE(it, agent.results.end());
  EXPECT_TRUE(it->timeout);
  const PairCounters totals = agent.tracker.Totals();
  EXPECT_EQ(totals.timed_out, 1U);
  EXPECT_EQ(totals.unknown, 0U);
}

TEST(agent_e2e, ANicThatCannotSendShowsAsSendFailuresFromItNotTimeouts) {
  Agent agent(3);
  agent.transport.FailSends(0, SendStatus::kFailed);
  agent.RunUntil(kStart + 5s);
  std::size_t from_zero = 0;
  for (const ProbeResult& r : agent.results) {
    EXPECT_EQ(r.send_failed, r.src_nic == 0);
    EXPECT_FALSE(r.timeout);
    from_zero += r.src_nic == 0 ? 1 : 0;
  }
  EXPECT_NEAR(static_cast<double>(from_zero), 50.0, 2.0);
  EXPECT_EQ(agent.prober.nic_counters(0).send_errors, from_zero);
  EXPECT_EQ(agent.tracker.counters(0, 1).send_failed + agent.tracker.counters(0, 2).send_failed,
            from_zero);
  EXPECT_EQ(agent.tracker.Totals().timed_out, 0U);
}

TEST(agent_e2e, AFullSendQueueSkipsProbesWithoutResults) {
  Agent agent(3);
  agent.transport.FailSends(1, SendStatus::kRetryLater);
  agent.RunUntil(kStart + 5s);
  for (const ProbeResult& r : agent.results) {
    EXPECT_NE(r.src_nic, 1U);
    EXPECT_FALSE(r.timeout);
  }
  EXPECT_NEAR(static_cast<double>(agent.prober.nic_counters(1).send_retry_later), 50.0, 2.0);
  // Recovery: later probes from NIC 1 flow despite the sequence gap.
  agent.transport.FailSends(1, SendStatus::kOk);
  const std::size_t before = agent.results.size();
  agent.RunUntil(kStart + 10s);
  bool from_one = false;
  for (std::size_t i = before; i < agent.results.size(); ++i) {
    from_one = from_one || agent.results[i].src_nic == 1;
    EXPECT_FALSE(agent.results[i].timeout);
  }
  EXPECT_TRUE(from_one);
}

TEST(agent_e2e, TheLoopSleepsUntilSomethingIsDue) {
  Agent agent(2);
  const MonoTime wake = agent.prober.RunOnce();
  EXPECT_EQ(wake, agent.scheduler.NextDue());
  EXPECT_GT(wake, kStart);
  EXPECT_LT(wake, kStart + 100ms);
}

// A wait that ended with nothing ready needs no poll before the sends: the
// same results (replies late in their timeout and lost probes included)
// with fewer polls of the transport.
TEST(agent_e2e, AWaitThatSawNothingReadySkipsThePollBeforeTheSends) {
  Agent told(4);
  Agent not_told(4);
  for (Agent* agent : {&told, &not_told}) {
    agent->transport.SetDelayRule([](const ProbeOrder& o) -> std::chrono::nanoseconds {
      return o.sequence % 7 == 0 ? 499ms : 1ms;
    });
    agent->transport.SetDropRule(
        [](NicId, NicId dst, std::uint16_t port) { return dst == 2 && port % 3 == 0; });
  }
  told.RunUntil(kStart + 20s, true);
  not_told.RunUntil(kStart + 20s, false);
  ASSERT_GT(told.results.size(), 500U);
  EXPECT_EQ(told.tracker.Totals().timed_out, not_told.tracker.Totals().timed_out);
  EXPECT_GT(told.tracker.Totals().timed_out, 0U);
  ASSERT_EQ(told.results.size(), not_told.results.size());
  for (std::size_t i = 0; i < told.results.size(); ++i) {
    EXPECT_EQ(told.results[i].sequence, not_told.results[i].sequence);
    EXPECT_EQ(told.results[i].timeout, not_told.results[i].timeout);
    EXPECT_EQ(told.results[i].nic_recv_ns, not_told.results[i].nic_recv_ns);
  }
  EXPECT_LT(told.transport.polls(), not_told.transport.polls() * 3 / 4);
}

TEST(agent_e2e, StopSendingSettlesWhatIsOutWithoutNewProbes) {
  Agent agent(4);
  agent.RunUntil(kStart + 10s);
  agent.prober.StopSending();
  const PairCounters before = agent.tracker.Totals();
  agent.RunUntil(kStart + 12s);  // longer than the 500 ms timeout
  const PairCounters after = agent.tracker.Totals();
  EXPECT_EQ(after.sent, before.sent);  // nothing new left
  EXPECT_EQ(agent.tracker.pending(), 0U);
  EXPECT_EQ(after.received + after.timed_out, after.sent);  // every probe out was decided
  EXPECT_EQ(after.timed_out, 0U);
  // With nothing to send, only tracker deadlines could wake the loop: none left.
  EXPECT_EQ(agent.prober.RunOnce(), MonoTime::max());
}

}  // namespace
}  // namespace hostmesh::agent
