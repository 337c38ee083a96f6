// Cost of the hot path (Increment, Observe) and of one scrape of 1000 series.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "common/metrics/buckets.h"
#include "common/metrics/exposition.h"
#include "common/metrics/registry.h"

namespace hostmesh::metrics {
namespace {

void BM_CounterIncrement(benchmark::State& state) {
  static Registry* registry = new Registry;  // shared by the benchmark's threads
  static prometheus::Counter& counter = registry->AddCounter("bench_probes_total", "h");
  for (auto _ : state) counter.Increment();
  benchmark::DoNotOptimize(counter.Value());
}
BENCHMARK(BM_CounterIncrement)->Threads(1)->Threads(4);

void BM_HistogramObserve(benchmark::State& state) {
  static Registry* registry = new Registry;
  static prometheus::Histogram& histogram =
      registry->AddHistogram("bench_rtt_seconds", "h", ExponentialBucketsRange(1e-6, 1, 13));
  double v = 1e-6;
  for (auto _ : state) {
    histogram.Observe(v);
    v = v < 1 ? v * 1.7 : 1e-6;  // walk every bucket
  }
}
BENCHMARK(BM_HistogramObserve)->Threads(1)->Threads(4);

// 1000 series: 10 callback counter families x 100 (src, dst) pairs, as the
// agent exports them; Collect + render.
void BM_CollectAndRender1000Series(benchmark::State& state) {
  Registry registry;
  for (int f = 0; f < 10; ++f) {
    registry.AddCallbackFamily(
        MetricType::kCounter, "bench_family" + std::to_string(f) + "_total", "Help text.",
        {"src", "dst"}, [] {
          std::vector<ScrapedValue> out;
          for (int i = 0; i < 100; ++i) {
            out.push_back(
                {{"nic" + std::to_string(i / 10), "nic" + std::to_string(i % 10)}, i * 12345.0});
          }
          return out;
        });
  }
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = RenderText(registry);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_CollectAndRender1000Series);

// 1000 series as histogram lines: 64 histograms x 13 bounds (+Inf, sum, count).
void BM_CollectAndRender64Histograms(benchmark::State& state) {
  Registry registry;
  prometheus::Family<prometheus::Histogram>& family =
      registry.AddHistogramFamily("bench_rtt_seconds", "h");
  const std::vector<double> bounds = ExponentialBucketsRange(1e-6, 1, 13);
  for (int i = 0; i < 64; ++i)
    family.Add({{"nic", "nic" + std::to_string(i)}}, bounds).Observe(1e-3);
  for (auto _ : state) {
    const std::string text = RenderText(registry);
    benchmark::DoNotOptimize(text.data());
  }
  state.SetItemsProcessed(state.iterations() * 64 * 16);
}
BENCHMARK(BM_CollectAndRender64Histograms);

}  // namespace
}  // namespace hostmesh::metrics
