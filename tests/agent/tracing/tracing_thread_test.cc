// The tracer thread over the tracer's scripted fake socket layer: it traces
// the targets it is handed, reports each path once, learns the path length
// for new ports, and stops promptly. The fake moves a VirtualClock, so a trace
// takes no real time; only the hand-over between threads is waited for.
#include "agent/main/tracing_thread.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "common/metrics/registry.h"
#include "tests/tracer/fake_trace_io.h"

namespace hostmesh::agent::app {
namespace {

using namespace std::chrono_literals;
using tracer::Ipv4;

Ipv4 Ip(const char* text) {
  return *Ipv4::Parse(text);
}

template <typename Condition>
bool Eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);  // polling period, not a wait for an outcome
  }
  return true;
}

tracer::ContinuousConfig Config() {
  tracer::ContinuousConfig c;
  c.refresh_period = 60s;
  c.budget = {.probes_per_second = 1e6,
              .burst = 100,
              .per_first_hop_per_second = 1e6,
              .per_first_hop_burst = 100};
  c.request_template.destination_swallows = true;
  c.request_template.session = 5;
  return c;
}

std::vector<tracer::TraceTarget> Targets(int ports) {
  std::vector<tracer::TraceTarget> out;
  for (int i = 0; i < ports; ++i) {
    tracer::TraceTarget t;
    t.src_nic = 0;
    t.dst_nic = 1;
    t.tuple = {Ip("198.18.0.1"), Ip("198.18.0.5"), static_cast<std::uint16_t>(50000 + i), 4791,
               tracer::kIpProtoUdp};
    out.push_back(t);
  }
  return out;
}

class Reports {
 public:
  void Add(const tracer::PathReport& r) {
    std::lock_guard lock(mu_);
    reports_.push_back(r);
  }
  std::vector<tracer::PathReport> Get() const {
    std::lock_guard lock(mu_);
    return reports_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<tracer::PathReport> reports_;
};

TEST(tracing_thread, TracesEveryTargetOnceAndLearnsThePathLength) {
  VirtualClock clock;
  auto io = std::make_unique<tracer::testing::FakeTraceIo>(clock);
  io->path = {{Ip("198.18.0.0")}, {Ip("198.19.0.1")}, {Ip("198.19.0.4")}};
  io->swallow = true;
  const tracer::testing::FakeTraceIo* fake = io.get();
  Reports reports;
  PathTracer tracer(Config(), std::move(io), clock,
                    [&](const tracer::PathReport& r) { reports.Add(r); });
  ASSERT_TRUE(tracer.up());
  tracer.Start();
  tracer.SetTargets(Targets(3));
  ASSERT_TRUE(Eventually([&] { return tracer.Status().counters.traces_run == 3; }));

  const auto got = reports.Get();
  ASSERT_EQ(got.size(), 3U);
  for (const tracer::PathReport& r : got) {
    EXPECT_TRUE(r.reached_destination);
    EXPECT_FALSE(r.changed);
    EXPECT_EQ(r.dst_nic, 1U);
    ASSERT_EQ(r.hops.size(), 4U);
    EXPECT_EQ(r.hops[1].address, Ip("198.19.0.1"));
    EXPECT_EQ(r.hops[3].status, tracer::HopStatus::kInferredDestination);
  }
  // The first port waits out max_silent_run (3) swallowed probes; the others
  // borrow its length and its first hop (TTL 1 not probed) and stop at the
  // first swallowed probe: 6 + 3 + 3.
  EXPECT_EQ(fake->ttls.size(), 12U);
  const TraceStatus status = tracer.Status();
  EXPECT_TRUE(status.up);
  EXPECT_EQ(status.targets, 3U);
  EXPECT_EQ(status.counters.reports, 3U);
  EXPECT_EQ(status.counters.hops_answered, 7U);  // hop 1 of the later two was not probed

  // Idle now until the refresh (60 s of virtual time, which never passes
  // unless the test advances it): Stop must not wait for it. A Stop that
  // waited would hang; 10 s is a join on a loaded machine with room to spare.
  const auto before = std::chrono::steady_clock::now();
  tracer.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 10s);
  EXPECT_FALSE(tracer.Status().up);
}

TEST(tracing_thread, NewTargetsAfterARotationAreTracedFirst) {
  VirtualClock clock;
  auto io = std::make_unique<tracer::testing::FakeTraceIo>(clock);
  io->path = {{Ip("198.18.0.0")}, {Ip("198.19.0.1")}, {Ip("198.19.0.4")}};
  io->swallow = true;
  Reports reports;
  PathTracer tracer(Config(), std::move(io), clock,
                    [&](const tracer::PathReport& r) { reports.Add(r); });
  tracer.Start();
  tracer.SetTargets(Targets(2));
  ASSERT_TRUE(Eventually([&] { return reports.Get().size() == 2; }));
  auto rotated = Targets(3);
  rotated.erase(rotated.begin());  // 50000 rotated out, 50002 in
  tracer.SetTargets(rotated);
  ASSERT_TRUE(Eventually([&] { return reports.Get().size() == 3; }));
  EXPECT_EQ(reports.Get().back().tuple.sport, 50002);
  EXPECT_EQ(tracer.Status().targets, 2U);
  EXPECT_EQ(tracer.Status().counters.rotation_traces, 3U);
}

TEST(tracing_thread, WithoutASocketItIsDownAndSaysSo) {
  VirtualClock clock;
  PathTracer tracer(Config(), nullptr, clock, [](const tracer::PathReport&) {});
  EXPECT_FALSE(tracer.up());
  tracer.Start();
  tracer.SetTargets(Targets(2));
  const TraceStatus status = tracer.Status();
  EXPECT_FALSE(status.up);
  EXPECT_EQ(status.unavailable, 1U);
  EXPECT_EQ(status.targets, 0U);

  metrics::Registry registry;
  RegisterTraceMetrics(registry, [&] { return tracer.Status(); });
  std::map<std::string, double> values;
  for (const auto& family : registry.Collect()) {
    for (const auto& m : family.metric) values[family.name] += m.counter.value + m.gauge.value;
  }
  EXPECT_EQ(values.at("hostmesh_agent_tracer_up"), 0);
  EXPECT_EQ(values.at("hostmesh_agent_trace_unavailable_total"), 1);
  for (const char* name :
       {"hostmesh_agent_trace_runs_total", "hostmesh_agent_trace_hops_answered_total",
        "hostmesh_agent_trace_hops_silent_total", "hostmesh_agent_trace_path_changes_total",
        "hostmesh_agent_trace_budget_exhausted_total"}) {
    EXPECT_EQ(values.at(name), 0) << name;
  }
}

}  // namespace
}  // namespace hostmesh::agent::app
