// ContinuousTracer's scheduling cost at the agent's scale (8 NICs x 7
// destinations x 16 ports = 896 5-tuples), in virtual time: NextTrace while
// the whole pool is due and the budget refuses (the first pass after start and
// after each rotation), and the steady state of one trace handed out and done.
#include <benchmark/benchmark.h>

#include "common/base/clock.h"
#include "tracer/continuous_tracer.h"

namespace hostmesh::tracer {
namespace {

std::vector<TraceTarget> Pool() {
  std::vector<TraceTarget> out;
  for (std::uint32_t s = 0; s < 8; ++s) {
    for (std::uint32_t d = 0; d < 8; ++d) {
      if (d == s) continue;
      for (std::uint16_t p = 0; p < 16; ++p) {
        TraceTarget t;
        t.src_nic = s;
        t.dst_nic = d;
        t.tuple = {Ipv4{0xC6120001u + 4 * s}, Ipv4{0xC6120001u + 4 * d},
                   static_cast<std::uint16_t>(50000 + 16 * s + p), kRoceV2Port, kIpProtoUdp};
        out.push_back(t);
      }
    }
  }
  return out;
}

TraceResult Answer(const TraceRequest& request) {
  TraceResult r;
  r.tuple = request.tuple;
  r.hops = {{1, Ipv4{request.tuple.src.value - 1}, HopStatus::kTimeExceeded},
            {2, Ipv4{0x0A000001u}, HopStatus::kTimeExceeded},
            {3, Ipv4{request.tuple.dst.value - 1}, HopStatus::kTimeExceeded},
            {4, request.tuple.dst, HopStatus::kInferredDestination}};
  r.reached_destination = true;
  r.end = TraceEnd::kInferredDestination;
  r.probes_sent = 4;
  return r;
}

void BM_NextTraceWhileThePoolWaitsForBudget(benchmark::State& state) {
  VirtualClock clock{MonoTime{std::chrono::seconds{1000}}};
  ContinuousTracer tracer(ContinuousConfig{}, clock);
  tracer.SetTargets(Pool());
  MonoTime wake{};
  while (auto request = tracer.NextTrace(wake)) tracer.OnTraceDone(Answer(*request));
  for (auto _ : state) benchmark::DoNotOptimize(tracer.NextTrace(wake));
}
BENCHMARK(BM_NextTraceWhileThePoolWaitsForBudget);

void BM_TraceHandedOutAndDone(benchmark::State& state) {
  VirtualClock clock{MonoTime{std::chrono::seconds{1000}}};
  ContinuousTracer tracer(ContinuousConfig{}, clock);
  tracer.SetTargets(Pool());
  MonoTime wake{};
  for (auto _ : state) {
    auto request = tracer.NextTrace(wake);
    if (!request) {
      clock.AdvanceTo(wake);
      continue;
    }
    benchmark::DoNotOptimize(tracer.OnTraceDone(Answer(*request)));
  }
}
BENCHMARK(BM_TraceHandedOutAndDone);

}  // namespace
}  // namespace hostmesh::tracer
