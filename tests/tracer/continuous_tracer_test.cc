// The continuous scheduler in virtual time: first traces, refresh, rotation,
// change detection, periodic reports, the budget.
#include "tracer/continuous_tracer.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace hostmesh::tracer {
namespace {

using namespace std::chrono_literals;

Ipv4 Ip(const char* text) {
  return *Ipv4::Parse(text);
}

TraceTarget Target(const char* src, const char* dst, std::uint16_t sport) {
  TraceTarget t;
  t.tuple.src = Ip(src);
  t.tuple.dst = Ip(dst);
  t.tuple.sport = sport;
  return t;
}

class ContinuousTracerTest : public ::testing::Test {
 protected:
  ContinuousTracerTest() {
    config_.refresh_period = 60s;
    config_.report_period = 300s;
    config_.budget = {.probes_per_second = 1000,
                      .burst = 100,
                      .per_first_hop_per_second = 1000,
                      .per_first_hop_burst = 100};
    config_.netdevs = {"nic0"};
  }

  ContinuousTracer& Tracer() {
    if (!tracer_) tracer_ = std::make_unique<ContinuousTracer>(config_, clock_);
    return *tracer_;
  }

  // The path the fabric gives a 5-tuple: first hop by source, spine by port.
  std::vector<Ipv4> PathOf(const FiveTuple& t) const {
    if (const auto it = override_.find(t); it != override_.end()) return it->second;
    return {Ipv4{t.src.value - 1}, Ipv4{0x0A000000u + t.sport % 4}, Ipv4{t.dst.value - 1}};
  }

  // As the engine would trace it: TTL 1 taken from a trusted first hop, no
  // destination probe when every known switch answers as before.
  TraceResult Trace(const TraceRequest& request) const {
    TraceResult r;
    r.tuple = request.tuple;
    int ttl = 1;
    for (const Ipv4 hop : PathOf(request.tuple)) {
      if (ttl == 1 && !request.first_hop.IsZero()) {
        r.hops.push_back({ttl++, request.first_hop, HopStatus::kTimeExceeded});
        r.first_probed_ttl = 2;
        continue;
      }
      const bool silent = silent_ttl_ == ttl;
      r.hops.push_back(
          {ttl++, silent ? Ipv4{} : hop, silent ? HopStatus::kSilent : HopStatus::kTimeExceeded});
      ++r.probes_sent;
    }
    const bool confirmed = request.known_hops == r.SwitchHops();
    r.hops.push_back({ttl, request.tuple.dst,
                      confirmed ? HopStatus::kInferredDestination : HopStatus::kDestination});
    r.reached_destination = true;
    r.end = confirmed ? TraceEnd::kInferredDestination : TraceEnd::kDestination;
    if (!confirmed) ++r.probes_sent;
    return r;
  }

  // Runs every trace due now (one at a time, as the agent's tracer thread
  // does); returns the reports.
  std::vector<PathReport> RunDue() {
    std::vector<PathReport> reports;
    MonoTime wake{};
    while (auto request = Tracer().NextTrace(wake)) {
      requests_.push_back(*request);
      if (auto report = Tracer().OnTraceDone(Trace(*request))) reports.push_back(*report);
    }
    wake_ = wake;
    return reports;
  }

  ContinuousConfig config_;
  VirtualClock clock_{MonoTime{std::chrono::seconds{1000}}};
  std::unique_ptr<ContinuousTracer> tracer_;
  std::map<FiveTuple, std::vector<Ipv4>> override_;
  int silent_ttl_ = 0;
  std::vector<TraceRequest> requests_;
  MonoTime wake_{};
};

TEST_F(ContinuousTracerTest, TracesEveryTargetAndReportsEachOnce) {
  Tracer().SetTargets({Target("198.18.0.1", "198.18.0.9", 49152),
                       Target("198.18.0.1", "198.18.0.9", 49153),
                       Target("198.18.0.9", "198.18.0.1", 49152)});
  const auto reports = RunDue();
  ASSERT_EQ(reports.size(), 3U);
  for (const PathReport& r : reports) {
    EXPECT_FALSE(r.changed);
    EXPECT_TRUE(r.reached_destination);
    EXPECT_EQ(r.hops.size(), 4U);
    EXPECT_EQ(r.time, VirtualClock::kDefaultWallStart);
  }
  EXPECT_EQ(Tracer().counters().traces_run, 3U);
  // The second port of 198.18.0.1 takes hop 1 from the first: 4 + 3 + 4.
  EXPECT_EQ(Tracer().counters().hops_answered, 11U);
  EXPECT_EQ(Tracer().counters().rotation_traces, 3U);
  EXPECT_EQ(wake_, clock_.MonotonicNow() + 60s);  // next: the refresh
  EXPECT_TRUE(RunDue().empty());
  EXPECT_EQ(Tracer().counters().traces_run, 3U);
}

TEST_F(ContinuousTracerTest, RefreshesEachPeriodAndReportsPeriodically) {
  Tracer().SetTargets({Target("198.18.0.1", "198.18.0.9", 49152)});
  ASSERT_EQ(RunDue().size(), 1U);
  for (int minute = 1; minute <= 4; ++minute) {
    clock_.Advance(60s);
    EXPECT_TRUE(RunDue().empty()) << "minute " << minute;  // traced, same path, no report yet
  }
  EXPECT_EQ(Tracer().counters().traces_run, 5U);
  clock_.Advance(60s);  // 300 s since the first report
  const auto reports = RunDue();
  ASSERT_EQ(reports.size(), 1U);
  EXPECT_FALSE(reports[0].changed);
  EXPECT_EQ(Tracer().counters().reports, 2U);
  EXPECT_EQ(Tracer().counters().path_changes, 0U);
}

TEST_F(ContinuousTracerTest, RotatedInPortGoesBeforeOverdueRefreshes) {
  Tracer().SetTargets(
      {Target("198.18.0.1", "198.18.0.9", 49152), Target("198.18.0.1", "198.18.0.9", 49153)});
  RunDue();
  clock_.Advance(90s);  // both refreshes overdue
  Tracer().SetTargets({Target("198.18.0.1", "198.18.0.9", 49152),
                       Target("198.18.0.1", "198.18.0.9", 49153),
                       Target("198.18.0.1", "198.18.0.9", 50000)});
  MonoTime wake{};
  const auto first = Tracer().NextTrace(wake);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->tuple.sport, 50000);
  const auto report = Tracer().OnTraceDone(Trace(*first));
  ASSERT_TRUE(report);  // its first trace
  EXPECT_EQ(Tracer().counters().rotation_traces, 3U);
}

TEST_F(ContinuousTracerTest, RemovedTargetIsForgottenAndItsLateResultDropped) {
  Tracer().SetTargets({Target("198.18.0.1", "198.18.0.9", 49152)});
  MonoTime wake{};
  const auto request = Tracer().NextTrace(wake);
  ASSERT_TRUE(request);
  Tracer().SetTargets({});  // the port rotated out while being traced
  EXPECT_FALSE(Tracer().OnTraceDone(Trace(*request)));
  EXPECT_EQ(Tracer().counters().results_dropped, 1U);
  EXPECT_EQ(Tracer().targets(), 0U);
}

TEST_F(ContinuousTracerTest, PathChangeIsReportedAtOnce) {
  const TraceTarget t = Target("198.18.0.1", "198.18.0.9", 49152);
  Tracer().SetTargets({t});
  RunDue();
  clock_.Advance(60s);
  auto path = PathOf(t.tuple);
  path[1] = Ip("10.9.9.9");  // another spine after a route change
  override_[t.tuple] = path;
  const auto reports = RunDue();
  ASSERT_EQ(reports.size(), 1U);
  EXPECT_TRUE(reports[0].changed);
  EXPECT_EQ(reports[0].hops[1].address, Ip("10.9.9.9"));
  EXPECT_EQ(Tracer().counters().path_changes, 1U);
  ASSERT_TRUE(Tracer().KnownPath(t.tuple));
  EXPECT_EQ((*Tracer().KnownPath(t.tuple))[1].address, Ip("10.9.9.9"));
}

TEST_F(ContinuousTracerTest, APathLongerThanTwoTiersIsKeptWholeAndConfirmedAsBefore) {
  // Five switches (leaf, spine, core, spine, leaf) and the destination: past
  // the hops kept in place.
  config_.request_template.destination_swallows = true;
  const TraceTarget t = Target("198.18.0.1", "198.18.0.9", 49152);
  override_[t.tuple] = {Ip("198.18.0.0"), Ip("10.1.0.1"), Ip("10.2.0.1"), Ip("10.1.0.2"),
                        Ip("198.18.0.8")};
  Tracer().SetTargets({t});
  RunDue();
  const auto known = Tracer().KnownPath(t.tuple);
  ASSERT_TRUE(known);
  ASSERT_EQ(known->size(), 6U);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ((*known)[i].address, override_[t.tuple][i]);
  EXPECT_EQ((*known)[5].address, t.tuple.dst);
  clock_.Advance(60s);
  EXPECT_TRUE(RunDue().empty());  // the same path: no report
  ASSERT_EQ(requests_.size(), 2U);
  EXPECT_EQ(requests_[1].known_hops, override_[t.tuple]);  // all five switches handed over
  override_[t.tuple][4] = Ip("198.18.0.12");               // the last leaf changed
  clock_.Advance(60s);
  const auto reports = RunDue();
  ASSERT_EQ(reports.size(), 1U);
  EXPECT_TRUE(reports[0].changed);
  EXPECT_EQ((*Tracer().KnownPath(t.tuple))[4].address, Ip("198.18.0.12"));
}

TEST_F(ContinuousTracerTest, ALostProbeBringsItsTraceForwardOncePerInterval) {
  config_.loss_retrace_after = 30s;
  const TraceTarget lost = Target("198.18.0.1", "198.18.0.9", 49152);
  const TraceTarget other = Target("198.18.0.1", "198.18.0.9", 49153);
  Tracer().SetTargets({lost, other});
  RunDue();
  clock_.Advance(10s);
  EXPECT_FALSE(Tracer().RetraceSoon(lost.tuple)) << "traced 10 s ago";
  EXPECT_FALSE(Tracer().RetraceSoon(Target("198.18.0.1", "198.18.0.9", 60000).tuple))
      << "not in the pool";
  clock_.Advance(25s);
  // Routing moved it (a link went down); its refresh is 25 s away.
  auto path = PathOf(lost.tuple);
  path[1] = Ip("10.9.9.9");
  override_[lost.tuple] = path;
  EXPECT_TRUE(Tracer().RetraceSoon(lost.tuple));
  EXPECT_FALSE(Tracer().RetraceSoon(lost.tuple)) << "due already";
  const auto reports = RunDue();
  ASSERT_EQ(reports.size(), 1U);
  EXPECT_EQ(reports[0].tuple, lost.tuple);
  EXPECT_TRUE(reports[0].changed);
  EXPECT_EQ(requests_.size(), 3U) << "the other 5-tuple waits for its refresh";
  EXPECT_EQ(Tracer().counters().loss_retraces, 1U);
  clock_.Advance(5s);
  EXPECT_FALSE(Tracer().RetraceSoon(lost.tuple)) << "retraced 5 s ago";

  config_.loss_retrace_after = 0s;
  tracer_.reset();
  Tracer().SetTargets({lost});
  RunDue();
  clock_.Advance(50s);
  EXPECT_FALSE(Tracer().RetraceSoon(lost.tuple)) << "off";
}

TEST_F(ContinuousTracerTest, SilentHopIsNotAChange) {
  const TraceTarget t = Target("198.18.0.1", "198.18.0.9", 49152);
  Tracer().SetTargets({t});
  RunDue();
  clock_.Advance(60s);
  silent_ttl_ = 2;
  EXPECT_TRUE(RunDue().empty());
  EXPECT_EQ(Tracer().counters().path_changes, 0U);
  EXPECT_EQ(Tracer().counters().silent_hops, 1U);
  // What was known of hop 2 is kept.
  EXPECT_EQ((*Tracer().KnownPath(t.tuple))[1].address, PathOf(t.tuple)[1]);
}

TEST_F(ContinuousTracerTest, LearnsThePathLengthForTheNextTrace) {
  config_.request_template.destination_swallows = true;
  config_.request_template.max_ttl = 6;
  const TraceTarget t = Target("198.18.0.1", "198.18.0.9", 49152);
  Tracer().SetTargets({t});
  RunDue();
  clock_.Advance(60s);
  RunDue();
  ASSERT_EQ(requests_.size(), 2U);
  EXPECT_EQ(requests_[0].switch_hops, 0);
  EXPECT_EQ(requests_[1].switch_hops, 3);
  EXPECT_TRUE(requests_[1].destination_swallows);
  EXPECT_EQ(requests_[1].max_ttl, 6);
  EXPECT_EQ(requests_[1].netdev, "nic0");
  EXPECT_NE(requests_[0].generation, requests_[1].generation);
}

TEST_F(ContinuousTracerTest, EachTraceIsBoundToItsSourceNicsNetdev) {
  config_.netdevs = {"nic0", "nic1"};
  TraceTarget second = Target("198.18.0.5", "198.18.0.9", 49152);
  second.src_nic = 1;
  TraceTarget unknown = Target("198.18.0.13", "198.18.0.9", 49152);
  unknown.src_nic = 2;  // no netdev listed: the trace's socket is not bound
  Tracer().SetTargets({second, unknown});
  RunDue();
  ASSERT_EQ(requests_.size(), 2U);
  std::map<Ipv4, std::string> netdev_by_source;
  for (const TraceRequest& r : requests_) netdev_by_source[r.tuple.src] = r.netdev;
  EXPECT_EQ(netdev_by_source[Ip("198.18.0.5")], "nic1");
  EXPECT_EQ(netdev_by_source[Ip("198.18.0.13")], "");
}

TEST_F(ContinuousTracerTest, BudgetSpreadsTracesOverTime) {
  // 2 probes/s, burst 4: one 4-probe trace every 2 s after the first.
  config_.first_hop_recheck = 0s;  // every trace probes TTL 1: 4-probe traces of new ports
  config_.budget = {.probes_per_second = 2,
                    .burst = 4,
                    .per_first_hop_per_second = 100,
                    .per_first_hop_burst = 100};
  std::vector<TraceTarget> targets;
  for (std::uint16_t p = 0; p < 10; ++p) {
    targets.push_back(Target("198.18.0.1", "198.18.0.9", static_cast<std::uint16_t>(49152 + p)));
  }
  Tracer().SetTargets(targets);
  const MonoTime start = clock_.MonotonicNow();
  std::vector<MonoTime> trace_times;
  while (trace_times.size() < 10) {
    MonoTime wake{};
    if (auto request = Tracer().NextTrace(wake)) {
      trace_times.push_back(clock_.MonotonicNow());
      Tracer().OnTraceDone(Trace(*request));
    } else {
      ASSERT_GT(wake, clock_.MonotonicNow());
      clock_.AdvanceTo(wake);
    }
  }
  EXPECT_EQ(trace_times.front(), start);
  for (std::size_t i = 1; i < trace_times.size(); ++i) {
    EXPECT_EQ(trace_times[i] - trace_times[i - 1], 2s);
  }
  EXPECT_EQ(Tracer().counters().budget_exhausted, 9U);  // each waiting trace once
  EXPECT_EQ(Tracer().counters().probes_sent, 40U);
}

TEST_F(ContinuousTracerTest, PerFirstHopBudgetIsKeyedByTheLearnedFirstHop) {
  // Plenty globally, 4 probes/s per first hop: two NICs trace side by side,
  // each at one trace per second.
  config_.first_hop_recheck = 0s;  // every trace probes TTL 1: 4-probe traces of new ports
  config_.budget = {.probes_per_second = 1000,
                    .burst = 100,
                    .per_first_hop_per_second = 4,
                    .per_first_hop_burst = 4};
  std::vector<TraceTarget> targets;
  for (std::uint16_t p = 0; p < 3; ++p) {
    targets.push_back(Target("198.18.0.1", "198.18.0.9", static_cast<std::uint16_t>(49152 + p)));
    targets.push_back(Target("198.18.0.9", "198.18.0.1", static_cast<std::uint16_t>(49152 + p)));
  }
  Tracer().SetTargets(targets);
  std::map<Ipv4, std::vector<MonoTime>> by_source;
  const MonoTime start = clock_.MonotonicNow();
  while (clock_.MonotonicNow() < start + 10s) {
    MonoTime wake{};
    if (auto request = Tracer().NextTrace(wake)) {
      by_source[request->tuple.src].push_back(clock_.MonotonicNow());
      Tracer().OnTraceDone(Trace(*request));
    } else {
      clock_.AdvanceTo(wake);
    }
  }
  ASSERT_EQ(by_source.size(), 2U);
  for (const auto& [src, times] : by_source) {
    ASSERT_EQ(times.size(), 3U) << src.ToString();
    // Side by side: one NIC's empty bucket does not hold up the other's.
    EXPECT_EQ(times[0], start) << src.ToString();
    EXPECT_EQ(times[1] - times[0], 1s);
    EXPECT_EQ(times[2] - times[1], 1s);
  }
}

TEST_F(ContinuousTracerTest, NewPortsOfANicWaitingForItsSwitchDoNotHoldUpAnotherNicsRefresh) {
  // NIC A's first hop allows one trace per 10 s; NIC B's refresh falls due
  // while A's rotated-in ports (traced before refreshes) wait: B's goes.
  config_.first_hop_recheck = 0s;  // every trace probes TTL 1: 4-probe traces of new ports
  config_.budget = {.probes_per_second = 1000,
                    .burst = 100,
                    .per_first_hop_per_second = 0.4,
                    .per_first_hop_burst = 4};
  const TraceTarget b = Target("198.18.0.9", "198.18.0.1", 49152);
  Tracer().SetTargets({b});
  RunDue();
  clock_.Advance(60s);  // B's refresh is due, B's bucket full again
  std::vector<TraceTarget> targets{b};
  for (std::uint16_t p = 0; p < 50; ++p) {
    targets.push_back(Target("198.18.0.1", "198.18.0.9", static_cast<std::uint16_t>(50000 + p)));
  }
  Tracer().SetTargets(targets);
  RunDue();
  ASSERT_EQ(requests_.size(), 3U);
  EXPECT_EQ(requests_[1].tuple.src, Ip("198.18.0.1"));  // one new port of A first
  EXPECT_EQ(requests_[2].tuple, b.tuple);               // then B's refresh, not A's queue
  // A's 49 others wait for A's bucket, counted once; the wake-up is when it refills.
  EXPECT_EQ(Tracer().counters().budget_exhausted, 1U);
  EXPECT_EQ(wake_, clock_.MonotonicNow() + 10s);
}

TEST_F(ContinuousTracerTest, ProbesOnlyWhatCanHaveChanged) {
  config_.first_hop_recheck = 30s;
  const TraceTarget a = Target("198.18.0.1", "198.18.0.9", 49152);
  const TraceTarget b = Target("198.18.0.1", "198.18.0.9", 49153);
  Tracer().SetTargets({a, b});
  RunDue();
  ASSERT_EQ(requests_.size(), 2U);
  // The first trace of the source probes TTL 1; the next takes its answer.
  EXPECT_TRUE(requests_[0].first_hop.IsZero());
  EXPECT_EQ(requests_[1].first_hop, Ip("198.18.0.0"));
  EXPECT_TRUE(requests_[1].known_hops.empty());  // a new port: its path is unknown
  EXPECT_EQ(Tracer().counters().probes_sent, 4U + 3U);

  clock_.Advance(60s);  // both refreshes due; the first hop was seen 60 s ago
  RunDue();
  ASSERT_EQ(requests_.size(), 4U);
  EXPECT_TRUE(requests_[2].first_hop.IsZero());  // rechecked by the first refresh
  EXPECT_EQ(requests_[3].first_hop, Ip("198.18.0.0"));
  EXPECT_EQ(requests_[3].known_hops, PathOf(b.tuple));
  EXPECT_EQ(requests_[3].switch_hops, 3);
  // 3 switches each (the known path confirmed, no destination probe), then 2.
  EXPECT_EQ(Tracer().counters().probes_sent, 4U + 3U + 3U + 2U);
  EXPECT_EQ(Tracer().counters().path_changes, 0U);
  const std::optional<std::vector<Hop>> known = Tracer().KnownPath(b.tuple);
  ASSERT_TRUE(known);
  EXPECT_EQ(known->size(), 4U);
}

TEST_F(ContinuousTracerTest, ChangedSpineIsStillSeenWithTheFirstHopTaken) {
  config_.first_hop_recheck = 300s;
  const TraceTarget a = Target("198.18.0.1", "198.18.0.9", 49152);
  const TraceTarget b = Target("198.18.0.1", "198.18.0.9", 49153);
  Tracer().SetTargets({a, b});
  RunDue();
  clock_.Advance(60s);
  override_[b.tuple] = {Ip("198.18.0.0"), Ip("10.9.9.9"), Ip("198.18.0.8")};
  const auto reports = RunDue();
  ASSERT_EQ(reports.size(), 1U);
  EXPECT_TRUE(reports[0].changed);
  EXPECT_EQ(reports[0].hops[1].address, Ip("10.9.9.9"));
  EXPECT_EQ(Tracer().counters().path_changes, 1U);
}

TEST_F(ContinuousTracerTest, ConfirmedRefreshesReserveFewerProbes) {
  // 2 probes/s, burst 4: refreshes of known paths with a trusted first hop
  // reserve and spend 2 probes each, so one goes every second, not every 2 s.
  config_.first_hop_recheck = 1000s;
  config_.refresh_period = 100s;
  config_.budget = {.probes_per_second = 2,
                    .burst = 4,
                    .per_first_hop_per_second = 100,
                    .per_first_hop_burst = 100};
  std::vector<TraceTarget> targets;
  for (std::uint16_t p = 0; p < 5; ++p) {
    targets.push_back(Target("198.18.0.1", "198.18.0.9", static_cast<std::uint16_t>(49152 + p)));
  }
  Tracer().SetTargets(targets);
  const auto run_until = [&](MonoTime end, std::vector<MonoTime>& times) {
    while (clock_.MonotonicNow() < end) {
      MonoTime wake{};
      if (auto request = Tracer().NextTrace(wake)) {
        times.push_back(clock_.MonotonicNow());
        Tracer().OnTraceDone(Trace(*request));
      } else {
        clock_.AdvanceTo(std::min(wake, end));
      }
    }
  };
  std::vector<MonoTime> first;
  run_until(clock_.MonotonicNow() + 50s, first);
  ASSERT_EQ(first.size(), 5U);
  clock_.Advance(100s);  // every refresh overdue, the bucket full
  std::vector<MonoTime> refreshes;
  const MonoTime start = clock_.MonotonicNow();
  run_until(start + 20s, refreshes);
  ASSERT_EQ(refreshes.size(), 5U);
  EXPECT_EQ(Tracer().counters().probes_sent, 4U + 4U * 3U + 5U * 2U);
  // The bucket was full: two back to back, then one per second.
  EXPECT_EQ(refreshes[1] - refreshes[0], 0s);
  for (std::size_t i = 2; i < refreshes.size(); ++i) {
    EXPECT_EQ(refreshes[i] - refreshes[i - 1], 1s);
  }
}

// Several in flight: one per source NIC, bounded by max_in_flight and the
// budgets, handed out without waiting for each other's results.
TEST_F(ContinuousTracerTest, HandsOutOneTracePerSourceAtOnce) {
  std::vector<TraceTarget> targets;
  for (const char* src : {"198.18.0.1", "198.18.1.1", "198.18.2.1"}) {
    for (std::uint16_t p = 0; p < 2; ++p) {
      targets.push_back(Target(src, "198.18.9.9", static_cast<std::uint16_t>(49152 + p)));
    }
  }
  Tracer().SetTargets(targets);
  std::vector<TraceRequest> out;
  MonoTime wake{};
  while (auto request = Tracer().NextTrace(wake)) out.push_back(*request);
  ASSERT_EQ(out.size(), 3U);
  EXPECT_EQ(Tracer().in_flight(), 3U);
  std::set<Ipv4> sources;
  for (const TraceRequest& r : out) sources.insert(r.tuple.src);
  EXPECT_EQ(sources.size(), 3U);
  // A source's second port waits for its first, and takes what it learned.
  Tracer().OnTraceDone(Trace(out[0]));
  auto next = Tracer().NextTrace(wake);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->tuple.src, out[0].tuple.src);
  EXPECT_EQ(next->first_hop, Ipv4{out[0].tuple.src.value - 1});
  EXPECT_EQ(next->switch_hops, 0);  // another port: the path length comes from the glue's hints
  EXPECT_FALSE(Tracer().NextTrace(wake).has_value());
}

TEST_F(ContinuousTracerTest, TracesInFlightAreBoundByMaxInFlightAndTheGlobalBurst) {
  std::vector<TraceTarget> targets;
  for (std::uint32_t i = 0; i < 6; ++i) {
    TraceTarget t = Target("198.18.0.1", "198.18.9.9", 49152);
    t.tuple.src = Ipv4{t.tuple.src.value + (i << 8)};
    targets.push_back(t);
  }
  config_.max_in_flight = 4;
  Tracer().SetTargets(targets);
  MonoTime wake{};
  int handed = 0;
  while (Tracer().NextTrace(wake)) ++handed;
  EXPECT_EQ(handed, 4);
  EXPECT_EQ(wake, MonoTime::max());  // asked again when one is done

  // A global burst of 8: two first traces (4 probes each) at once, whatever
  // the per-switch buckets allow.
  tracer_.reset();
  config_.max_in_flight = 8;
  config_.budget.burst = 8;
  config_.budget.probes_per_second = 8;
  Tracer().SetTargets(targets);
  handed = 0;
  while (Tracer().NextTrace(wake)) ++handed;
  EXPECT_EQ(handed, 2);
  EXPECT_EQ(wake, clock_.MonotonicNow() + 500ms);  // 4 tokens at 8/s
}

TEST_F(ContinuousTracerTest, TracesFallingDueCloseTogetherAreGatheredIntoOneWakeUp) {
  config_.gather = 1s;
  std::vector<TraceTarget> targets;
  std::vector<TraceRequest> first;
  MonoTime wake{};
  // Three NICs' ports traced 300 ms apart: their refreshes fall due 300 ms apart.
  for (const char* src : {"198.18.0.1", "198.18.1.1", "198.18.2.1"}) {
    targets.push_back(Target(src, "198.18.9.9", 49152));
    Tracer().SetTargets(targets);
    auto request = Tracer().NextTrace(wake);
    ASSERT_TRUE(request.has_value());  // a new port is due at once, gathered or not
    Tracer().OnTraceDone(Trace(*request));
    clock_.Advance(300ms);
  }
  const MonoTime t0 = clock_.MonotonicNow() - 900ms;
  clock_.AdvanceTo(t0 + 60s);
  auto request = Tracer().NextTrace(wake);
  ASSERT_TRUE(request.has_value());
  Tracer().OnTraceDone(Trace(*request));
  EXPECT_FALSE(Tracer().NextTrace(wake).has_value());
  // Not at 60.3 s and again at 60.6 s: once, a second after the last batch.
  EXPECT_EQ(wake, t0 + 61s);
  clock_.AdvanceTo(wake);
  int handed = 0;
  while (Tracer().NextTrace(wake)) ++handed;
  EXPECT_EQ(handed, 2);
}

TEST_F(ContinuousTracerTest, TracesWaitingForTheBudgetAreGatheredUntilTheBucketIsFull) {
  // A due trace short of tokens wakes when the global bucket is full again
  // (no token lost, so a pass keeps the budget's rate), not a gather later,
  // and not as soon as its own 4 tokens are there.
  config_.gather = 1s;
  config_.first_hop_recheck = 0s;
  config_.budget = {.probes_per_second = 20,
                    .burst = 8,
                    .per_first_hop_per_second = 100,
                    .per_first_hop_burst = 100};
  std::vector<TraceTarget> targets;
  for (std::uint16_t p = 0; p < 3; ++p) {
    targets.push_back(Target("198.18.0.1", "198.18.9.9", static_cast<std::uint16_t>(49152 + p)));
  }
  Tracer().SetTargets(targets);
  MonoTime wake{};
  for (int i = 0; i < 2; ++i) {  // 4 probes each: the bucket of 8 is empty after two
    auto request = Tracer().NextTrace(wake);
    ASSERT_TRUE(request.has_value());
    Tracer().OnTraceDone(Trace(*request));
  }
  EXPECT_FALSE(Tracer().NextTrace(wake).has_value());
  EXPECT_EQ(wake, clock_.MonotonicNow() + 400ms);  // 8 tokens at 20/s, not 4
  clock_.AdvanceTo(wake);
  EXPECT_TRUE(Tracer().NextTrace(wake).has_value());
}

}  // namespace
}  // namespace hostmesh::tracer
