// How long an inventory or a config full of mistakes takes to report, at 1k,
// 10k and 100k of the same mistake: reporting must grow linearly with the
// file (issue 24), so a hostile or broken file costs its parse and no more.
//
//   ninja -C build config_errors_bench && build/bench/config_errors_bench
//
// The time per mistake (the `per_issue` counter) should stay flat from 1k to
// 100k. Each run also checks that the message lists a bounded number of issues.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/config/config_error.h"
#include "common/config/yaml_loader.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"
#include "topology/inventory_writer.h"

namespace {

using hostmesh::config::ConfigError;

// Hosts that all share one name: every host after the first is a duplicate
// device name, reported at its line with the line of the first.
std::string DuplicateHostNames(std::int64_t hosts) {
  std::string text = "version: 1\nswitches: []\nlinks: []\nhosts:\n";
  for (std::int64_t i = 0; i < hosts; ++i) text += "  - {name: h, nics: []}\n";
  return text;
}

// One map with a key that repeats and as many keys nobody knows: every
// repetition is a duplicate key, every other key an unknown one.
std::string DuplicateAndUnknownKeys(std::int64_t keys) {
  std::string text = "host: h\n";
  for (std::int64_t i = 0; i < keys / 2; ++i) text += "host: h\n";
  for (std::int64_t i = 0; i < keys - keys / 2; ++i) text += "k" + std::to_string(i) + ": 1\n";
  return text;
}

void Report(benchmark::State& state, const std::string& text, std::size_t expected,
            void (*load)(const std::string&)) {
  std::size_t listed = 0;
  std::size_t message_bytes = 0;
  for (auto _ : state) {
    try {
      load(text);
      state.SkipWithError("no error reported");
      return;
    } catch (const ConfigError& e) {
      if (e.total() != expected) {
        state.SkipWithError("unexpected number of issues");
        return;
      }
      listed = e.issues().size();
      message_bytes = std::string_view(e.what()).size();
    }
  }
  state.counters["issues"] = static_cast<double>(expected);
  state.counters["listed"] = static_cast<double>(listed);
  state.counters["message_KB"] = static_cast<double>(message_bytes) / 1e3;
  state.counters["file_MB"] = static_cast<double>(text.size()) / 1e6;
  state.counters["per_issue"] = benchmark::Counter(
      static_cast<double>(expected),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_DuplicateHostNames(benchmark::State& state) {
  const std::string text = DuplicateHostNames(state.range(0));
  Report(state, text, static_cast<std::size_t>(state.range(0) - 1), [](const std::string& t) {
    benchmark::DoNotOptimize(hostmesh::topology::LoadInventory(t, "bench.yaml"));
  });
}
BENCHMARK(BM_DuplicateHostNames)
    ->Arg(1'000)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond);

void BM_DuplicateAndUnknownKeys(benchmark::State& state) {
  const std::string text = DuplicateAndUnknownKeys(state.range(0));
  Report(state, text, static_cast<std::size_t>(state.range(0)), [](const std::string& t) {
    hostmesh::config::ReadYaml(t, "bench.yaml", [](hostmesh::config::MapReader& r) {
      std::string host;
      r.Required("host", &host);
    });
  });
}
BENCHMARK(BM_DuplicateAndUnknownKeys)
    ->Arg(1'000)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond);

// What kMaxInventoryFileBytes is sized from: the inventory `hostmeshctl
// topology generate` writes for a fleet of 10,000 hosts x 8 rails x 64 spines.
void BM_GeneratedInventorySize(benchmark::State& state) {
  const hostmesh::topology::FabricShape shape{
      .hosts = static_cast<int>(state.range(0)), .rails = 8, .spines = 64};
  std::size_t bytes = 0;
  for (auto _ : state) {
    bytes = hostmesh::topology::WriteInventoryYaml(hostmesh::topology::GenerateInventory(shape), {})
                .size();
  }
  state.counters["file_MiB"] = static_cast<double>(bytes) / (1 << 20);
  state.counters["cap_MiB"] =
      static_cast<double>(hostmesh::topology::kMaxInventoryFileBytes.bytes) / (1 << 20);
}
BENCHMARK(BM_GeneratedInventorySize)->Arg(10'000)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
