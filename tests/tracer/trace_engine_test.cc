// RunTrace over the fake TraceIo, in virtual time: stop rules, silent and late
// hops, foreign and stale replies, pacing.
#include "tracer/trace_engine.h"

#include <gtest/gtest.h>

#include "tests/tracer/fake_trace_io.h"
#include "tracer/probe_tag.h"

namespace hostmesh::tracer {
namespace {

using namespace std::chrono_literals;
using testing::BuildIcmpError;
using testing::FakeHop;
using testing::FakeTraceIo;

Ipv4 Ip(const char* text) {
  return *Ipv4::Parse(text);
}

class TraceEngineTest : public ::testing::Test {
 protected:
  TraceEngineTest() : io_(clock_) {
    request_.tuple.src = Ip("198.18.0.1");
    request_.tuple.dst = Ip("198.18.0.9");
    request_.tuple.sport = 49152;
    request_.session = 77;
    request_.generation = 3;
    io_.path = {{Ip("198.18.0.0")}, {Ip("198.19.0.1")}, {Ip("198.19.0.8")}};
  }

  TraceResult Run() { return RunTrace(request_, io_, clock_); }

  static std::vector<Ipv4> Addresses(const TraceResult& r) {
    std::vector<Ipv4> out;
    for (const Hop& h : r.hops) out.push_back(h.address);
    return out;
  }

  VirtualClock clock_{MonoTime{std::chrono::seconds{1000}}};
  FakeTraceIo io_;
  TraceRequest request_;
};

TEST_F(TraceEngineTest, StopsAtPortUnreachableFromTheDestination) {
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kDestination);
  EXPECT_TRUE(r.reached_destination);
  EXPECT_EQ(r.probes_sent, 4);
  EXPECT_EQ(Addresses(r), (std::vector<Ipv4>{Ip("198.18.0.0"), Ip("198.19.0.1"), Ip("198.19.0.8"),
                                             Ip("198.18.0.9")}));
  EXPECT_EQ(r.SwitchHops(),
            (std::vector<Ipv4>{Ip("198.18.0.0"), Ip("198.19.0.1"), Ip("198.19.0.8")}));
  EXPECT_EQ(r.hops[0].rtt, 100us);
  EXPECT_EQ(r.hops[3].status, HopStatus::kDestination);
  EXPECT_EQ(r.answered_hops(), 4);
}

TEST_F(TraceEngineTest, SilentHopIsUnknownAndTheTraceGoesOn) {
  io_.path[1].silent = true;
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kDestination);
  EXPECT_EQ(r.hops[1].status, HopStatus::kSilent);
  EXPECT_TRUE(r.hops[1].address.IsZero());
  EXPECT_EQ(r.silent_hops(), 1);
  EXPECT_EQ(r.answered_hops(), 3);
}

TEST_F(TraceEngineTest, LateReplyFillsItsHopWhileALaterOneIsAwaited) {
  request_.probe_timeout = 100ms;
  io_.path[1].delay = 150ms;  // after its own timeout, during ttl 3's wait
  io_.path[2].delay = 80ms;
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kDestination);
  EXPECT_EQ(r.hops[1].address, Ip("198.19.0.1"));
  EXPECT_EQ(r.hops[1].rtt, 150ms);
}

TEST_F(TraceEngineTest, SwallowingDestinationWithKnownLengthEndsAtOnce) {
  io_.swallow = true;
  request_.destination_swallows = true;
  request_.switch_hops = 3;
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kInferredDestination);
  EXPECT_TRUE(r.reached_destination);
  EXPECT_EQ(r.probes_sent, 4);
  ASSERT_EQ(r.hops.size(), 4U);
  EXPECT_EQ(r.hops[3].status, HopStatus::kInferredDestination);
  EXPECT_EQ(r.hops[3].address, Ip("198.18.0.9"));
  EXPECT_EQ(r.answered_hops(), 3);
  EXPECT_EQ(r.silent_hops(), 0);
}

TEST_F(TraceEngineTest, SwallowingDestinationWithUnknownLengthWaitsOutTheSilentRun) {
  io_.swallow = true;
  request_.destination_swallows = true;
  request_.max_silent_run = 3;
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kInferredDestination);
  EXPECT_EQ(r.probes_sent, 6);   // ttl 4..6 silent
  ASSERT_EQ(r.hops.size(), 4U);  // the silent tail past the destination is dropped
  EXPECT_EQ(r.hops[3].address, Ip("198.18.0.9"));
}

TEST_F(TraceEngineTest, ShorterPathThanKnownStillInfersTheDestination) {
  io_.swallow = true;
  io_.path.pop_back();
  request_.destination_swallows = true;
  request_.switch_hops = 3;  // stale knowledge
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kInferredDestination);
  ASSERT_EQ(r.hops.size(), 3U);
  EXPECT_EQ(r.hops[2].status, HopStatus::kInferredDestination);
}

TEST_F(TraceEngineTest, SilentRunInsideALongerKnownPathInfersNothing) {
  // Five switches, the last three rate-limited: three silent hops in a row
  // are all on the known path, so hop 3 is not the destination.
  io_.swallow = true;
  io_.path = {{Ip("198.18.0.0")},
              {Ip("198.19.0.1")},
              {Ip("198.19.1.1"), true},
              {Ip("198.19.2.1"), true},
              {Ip("198.19.0.8"), true}};
  request_.destination_swallows = true;
  request_.switch_hops = 5;
  request_.max_silent_run = 3;
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kSilentLimit);
  EXPECT_FALSE(r.reached_destination);
  ASSERT_EQ(r.hops.size(), 5U);
  EXPECT_EQ(r.hops[2].status, HopStatus::kSilent);
  EXPECT_EQ(r.answered_hops(), 2);
}

TEST_F(TraceEngineTest, SwallowedProbeAtTheKnownDistanceWaitsAboutOneRtt) {
  io_.swallow = true;
  io_.path[1].delay = 300us;  // the slowest hop
  request_.destination_swallows = true;
  request_.switch_hops = 3;
  request_.probe_timeout = 100ms;
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kInferredDestination);
  ASSERT_EQ(io_.sends.size(), 4U);
  // 4 x 300 us + 2 ms after the last send, not 100 ms.
  EXPECT_EQ(clock_.MonotonicNow() - io_.sends[3], 4 * 300us + 2ms);
}

TEST_F(TraceEngineTest, SwitchAddedToAKnownPathStillAnswersTheShortWait) {
  io_.swallow = true;
  io_.path.push_back({Ip("198.19.0.9")});  // the path grew by one switch
  request_.destination_swallows = true;
  request_.switch_hops = 3;
  const TraceResult r = Run();
  ASSERT_GE(r.hops.size(), 5U);
  EXPECT_EQ(r.hops[3].status, HopStatus::kTimeExceeded);
  EXPECT_EQ(r.hops[3].address, Ip("198.19.0.9"));
  EXPECT_EQ(r.end, TraceEnd::kInferredDestination);
  EXPECT_EQ(r.hops.size(), 5U);
  EXPECT_EQ(r.hops[4].address, Ip("198.18.0.9"));
}

TEST_F(TraceEngineTest, SilentDestinationWithoutSwallowingIsNotReached) {
  io_.swallow = true;  // nobody answers past the switches, and we were not told why
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kSilentLimit);
  EXPECT_FALSE(r.reached_destination);
  EXPECT_EQ(r.hops.size(), 6U);
}

TEST_F(TraceEngineTest, MaxTtlBoundsTheTrace) {
  request_.max_ttl = 2;
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kOutOfTtl);
  EXPECT_EQ(r.probes_sent, 2);
}

TEST_F(TraceEngineTest, UnreachableFromAHopEndsThePath) {
  io_.path[1].type = 3;
  io_.path[1].code = 0;
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kUnreachable);
  EXPECT_FALSE(r.reached_destination);
  ASSERT_EQ(r.hops.size(), 2U);
  EXPECT_EQ(r.hops[1].status, HopStatus::kUnreachable);
  EXPECT_EQ(r.hops[1].address, Ip("198.19.0.1"));
}

TEST_F(TraceEngineTest, ForeignAndStaleRepliesAreCountedNotTaken) {
  const MonoTime t0 = clock_.MonotonicNow();
  FiveTuple other = request_.tuple;
  other.sport = 49153;
  const auto foreign_payload = EncodeProbePayload({1, request_.generation, request_.session});
  io_.Inject(t0 + 10us, BuildIcmpError(Ip("10.0.0.1"), request_.tuple.src, 11, 0, other,
                                       foreign_payload, 1000));
  // The previous trace of our own 5-tuple, ttl 1: same session, older generation.
  const auto stale_payload = EncodeProbePayload({1, request_.generation - 1, request_.session});
  io_.Inject(t0 + 20us, BuildIcmpError(Ip("10.0.0.2"), request_.tuple.src, 11, 0, request_.tuple,
                                       stale_payload, 1000));
  io_.Inject(t0 + 30us, {0x45, 0x00});
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kDestination);
  EXPECT_EQ(r.hops[0].address, Ip("198.18.0.0"));
  EXPECT_EQ(r.foreign_replies, 1);
  EXPECT_EQ(r.stale_replies, 1);
  EXPECT_EQ(r.unparsable_replies, 1);
}

TEST_F(TraceEngineTest, ShortQuotesMatchByLength) {
  io_.quote_payload_bytes = 0;
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kDestination);
  EXPECT_EQ(r.answered_hops(), 4);
}

TEST_F(TraceEngineTest, ProbesAreSpreadByTheMinimumInterval) {
  request_.min_probe_interval = 50ms;
  const TraceResult r = Run();
  ASSERT_EQ(io_.sends.size(), 4U);
  for (std::size_t i = 1; i < io_.sends.size(); ++i) {
    EXPECT_GE(io_.sends[i] - io_.sends[i - 1], 50ms);
  }
  EXPECT_EQ(io_.ttls, (std::vector<int>{1, 2, 3, 4}));
}

TEST_F(TraceEngineTest, SendErrorIsReported) {
  io_.send_error = "sendto: Network is unreachable";
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kError);
  EXPECT_NE(r.error.find("ttl 1"), std::string::npos);
  io_.send_error.clear();
  io_.open_error = "bind: Address already in use";
  EXPECT_EQ(Run().error, "bind: Address already in use");
}

TEST_F(TraceEngineTest, KnownSwitchesGoOutAtOnceAndAreAwaitedTogether) {
  io_.swallow = true;
  io_.path[0].delay = 300us;
  request_.destination_swallows = true;
  request_.switch_hops = 3;
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kInferredDestination);
  ASSERT_EQ(io_.ttls, (std::vector<int>{1, 2, 3, 4}));
  // TTLs 1..3 back to back; the swallowed probe after the slowest reply.
  EXPECT_EQ(io_.sends[1], io_.sends[0]);
  EXPECT_EQ(io_.sends[2], io_.sends[0]);
  EXPECT_EQ(io_.sends[3] - io_.sends[0], 300us);
  EXPECT_EQ(r.hops[0].rtt, 300us);
  EXPECT_EQ(r.hops[1].rtt, 100us);
}

TEST_F(TraceEngineTest, ConfirmedKnownPathSparesTheFirstHopAndTheDestination) {
  io_.swallow = true;
  request_.destination_swallows = true;
  request_.switch_hops = 3;
  request_.first_hop = Ip("198.18.0.0");
  request_.known_hops = {Ip("198.18.0.0"), Ip("198.19.0.1"), Ip("198.19.0.8")};
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kInferredDestination);
  EXPECT_TRUE(r.reached_destination);
  EXPECT_EQ(io_.ttls, (std::vector<int>{2, 3}));
  EXPECT_EQ(r.probes_sent, 2);
  EXPECT_EQ(r.first_probed_ttl, 2);
  ASSERT_EQ(r.hops.size(), 4U);
  EXPECT_EQ(r.hops[0].address, Ip("198.18.0.0"));
  EXPECT_EQ(r.hops[0].status, HopStatus::kTimeExceeded);
  EXPECT_EQ(r.hops[3].status, HopStatus::kInferredDestination);
  EXPECT_EQ(r.answered_hops(), 2);  // hop 1 was not probed
  // Done when the last reply came: no wait for the swallowed probe.
  EXPECT_EQ(clock_.MonotonicNow() - io_.sends[0], 100us);
}

// Found by fuzz/tracer_trace_engine_fuzz.cc: the destination inferred without
// a probe was a hop with TTL 0 (its path report said so, and PathsDiffer
// took it for no destination at all).
TEST_F(TraceEngineTest, DestinationInferredWithoutAProbeHasItsTtl) {
  io_.swallow = true;
  request_.destination_swallows = true;
  request_.switch_hops = 3;
  request_.first_hop = Ip("198.18.0.0");
  request_.known_hops = {Ip("198.18.0.0"), Ip("198.19.0.1"), Ip("198.19.0.8")};
  const TraceResult r = Run();
  ASSERT_EQ(r.end, TraceEnd::kInferredDestination);
  ASSERT_EQ(r.hops.size(), 4U);
  for (std::size_t i = 0; i < r.hops.size(); ++i) EXPECT_EQ(r.hops[i].ttl, static_cast<int>(i) + 1);
}

TEST_F(TraceEngineTest, ChangedKnownPathProbesTheDestinationAsBefore) {
  io_.swallow = true;
  request_.destination_swallows = true;
  request_.switch_hops = 3;
  request_.first_hop = Ip("198.18.0.0");
  request_.known_hops = {Ip("198.18.0.0"), Ip("198.19.0.2"), Ip("198.19.0.8")};  // another spine
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kInferredDestination);
  EXPECT_EQ(io_.ttls, (std::vector<int>{2, 3, 4}));
  ASSERT_EQ(r.hops.size(), 4U);
  EXPECT_EQ(r.hops[1].address, Ip("198.19.0.1"));
}

TEST_F(TraceEngineTest, SilentKnownSwitchIsNotAConfirmation) {
  io_.swallow = true;
  io_.path[1].silent = true;  // rate-limited
  request_.destination_swallows = true;
  request_.switch_hops = 3;
  request_.known_hops = {Ip("198.18.0.0"), Ip("198.19.0.1"), Ip("198.19.0.8")};
  request_.probe_timeout = 100ms;
  const TraceResult r = Run();
  EXPECT_EQ(io_.ttls, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(r.end, TraceEnd::kInferredDestination);
  EXPECT_EQ(r.hops[1].status, HopStatus::kSilent);
  // One wait of probe_timeout for the three, not one per hop.
  EXPECT_EQ(io_.sends[3] - io_.sends[0], 100ms);
}

TEST_F(TraceEngineTest, KnownLengthEndsWhereTheHopsSentAtOnceSayItEnds) {
  io_.path[1].type = 3;  // the spine refuses
  request_.switch_hops = 3;
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kUnreachable);
  ASSERT_EQ(r.hops.size(), 2U);  // TTL 3, sent with it, is dropped
  EXPECT_EQ(r.probes_sent, 3);
}

TEST_F(TraceEngineTest, ReplyToAnUnprobedFirstHopIsStale) {
  request_.first_hop = Ip("198.18.0.0");
  const auto payload = EncodeProbePayload({1, request_.generation, request_.session});
  io_.Inject(clock_.MonotonicNow() + 10us, BuildIcmpError(Ip("10.0.0.2"), request_.tuple.src, 11, 0,
                                                          request_.tuple, payload, 1000));
  const TraceResult r = Run();
  EXPECT_EQ(r.end, TraceEnd::kDestination);
  EXPECT_EQ(r.hops[0].address, Ip("198.18.0.0"));
  EXPECT_EQ(r.stale_replies, 1);
  EXPECT_EQ(io_.ttls.front(), 2);
}

// Several traces under one runner, in virtual time: each as it would be alone,
// side by side.
class TraceRunnerTest : public TraceEngineTest {
 protected:
  TraceRunnerTest() {
    other_ = request_;
    other_.tuple.src = Ip("198.18.1.1");
    other_.tuple.dst = Ip("198.18.1.9");
    other_.generation = 5;
    io_.paths_by_source[other_.tuple.src] = {
        {Ip("198.18.1.0")}, {Ip("198.19.0.2")}, {Ip("198.19.1.8")}};
  }

  TraceRequest other_;
};

TEST_F(TraceRunnerTest, TracesUnderWayTogetherEndAsEachWouldAlone) {
  const MonoTime t0 = clock_.MonotonicNow();
  const TraceResult alone = Run();
  const auto alone_duration = clock_.MonotonicNow() - t0;
  io_.sends.clear();
  io_.sent_tuples.clear();

  const MonoTime t1 = clock_.MonotonicNow();
  TraceRunner runner(io_, clock_);
  ++request_.generation;
  runner.Start(request_);
  runner.Start(other_);
  EXPECT_EQ(runner.active(), 2U);
  std::vector<TraceResult> done;
  while (runner.active() > 0) runner.RunUntil(MonoTime::max(), done);
  ASSERT_EQ(done.size(), 2U);
  // Side by side: both over in the time one takes, not two.
  EXPECT_EQ(clock_.MonotonicNow() - t1, alone_duration);
  // Both TTL 1 probes left before either TTL 2.
  ASSERT_GE(io_.sent_tuples.size(), 2U);
  EXPECT_NE(io_.sent_tuples[0], io_.sent_tuples[1]);
  for (const TraceResult& r : done) {
    EXPECT_EQ(r.end, TraceEnd::kDestination);
    EXPECT_EQ(r.probes_sent, alone.probes_sent);
    EXPECT_EQ(r.foreign_replies, 0);  // the other trace's replies are not foreign
    EXPECT_EQ(r.stale_replies, 0);
    const std::vector<FakeHop>& path =
        r.tuple.src == other_.tuple.src ? io_.paths_by_source[other_.tuple.src] : io_.path;
    ASSERT_EQ(r.hops.size(), 4U);
    for (std::size_t i = 0; i < path.size(); ++i) EXPECT_EQ(r.hops[i].address, path[i].address);
    EXPECT_EQ(r.hops[3].address, r.tuple.dst);
  }
}

TEST_F(TraceRunnerTest, ASilentHopOfOneTraceDoesNotHoldUpAnother) {
  request_.probe_timeout = 100ms;
  io_.path[1].silent = true;  // the first trace waits out TTL 2's timeout
  TraceRunner runner(io_, clock_);
  const MonoTime t0 = clock_.MonotonicNow();
  runner.Start(request_);
  runner.Start(other_);
  std::vector<TraceResult> done;
  runner.RunUntil(MonoTime::max(), done);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].tuple, other_.tuple);
  EXPECT_LT(clock_.MonotonicNow() - t0, 1ms);
  EXPECT_EQ(runner.active(), 1U);
  // Its TTL 2 is awaited for the whole timeout, from when it left.
  MonoTime ttl2_sent{};
  for (std::size_t i = 0; i < io_.sends.size(); ++i) {
    if (io_.sent_tuples[i] == request_.tuple && io_.ttls[i] == 2) ttl2_sent = io_.sends[i];
  }
  EXPECT_EQ(runner.NextDeadline(), ttl2_sent + 100ms);
  done.clear();
  runner.RunUntil(MonoTime::max(), done);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].tuple, request_.tuple);
  EXPECT_EQ(done[0].end, TraceEnd::kDestination);
  EXPECT_EQ(done[0].hops[1].status, HopStatus::kSilent);
}

TEST_F(TraceRunnerTest, RunUntilReturnsAtItsTimeWithTheTracesStillUnderWay) {
  request_.probe_timeout = 100ms;
  io_.path[0].silent = true;
  TraceRunner runner(io_, clock_);
  const MonoTime t0 = clock_.MonotonicNow();
  runner.Start(request_);
  std::vector<TraceResult> done;
  runner.RunUntil(t0 + 30ms, done);
  EXPECT_TRUE(done.empty());
  EXPECT_EQ(clock_.MonotonicNow(), t0 + 30ms);
  EXPECT_EQ(runner.active(), 1U);
  while (runner.active() > 0) runner.RunUntil(MonoTime::max(), done);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].hops[0].status, HopStatus::kSilent);
  EXPECT_EQ(done[0].end, TraceEnd::kDestination);
}

TEST_F(TraceRunnerTest, AReplyQuotingNoTraceUnderWayIsForeignToEach) {
  FiveTuple elsewhere = request_.tuple;
  elsewhere.sport = 50000;
  const auto payload = EncodeProbePayload({1, 0, request_.session});
  io_.Inject(clock_.MonotonicNow() + 10us,
             BuildIcmpError(Ip("10.0.0.1"), request_.tuple.src, 11, 0, elsewhere, payload, 1000));
  TraceRunner runner(io_, clock_);
  runner.Start(request_);
  runner.Start(other_);
  std::vector<TraceResult> done;
  while (runner.active() > 0) runner.RunUntil(MonoTime::max(), done);
  ASSERT_EQ(done.size(), 2U);
  for (const TraceResult& r : done) {
    EXPECT_EQ(r.foreign_replies, 1);
    EXPECT_EQ(r.end, TraceEnd::kDestination);
  }
}

TEST_F(TraceRunnerTest, AnOpenErrorEndsOnlyItsTrace) {
  io_.open_error = "bind: Address already in use";
  TraceRunner runner(io_, clock_);
  runner.Start(request_);
  io_.open_error.clear();
  runner.Start(other_);
  std::vector<TraceResult> done;
  while (runner.active() > 0) runner.RunUntil(MonoTime::max(), done);
  ASSERT_EQ(done.size(), 2U);
  EXPECT_EQ(done[0].error, "bind: Address already in use");
  EXPECT_EQ(done[0].probes_sent, 0);
  EXPECT_EQ(done[1].end, TraceEnd::kDestination);
}

}  // namespace
}  // namespace hostmesh::tracer
