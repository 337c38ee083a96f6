// Topology at the scale the issue asks for: a 4096-host, 8-rail, 64-spine
// inventory must load in under 2 s when generated in memory (from YAML text,
// yaml-cpp's parser takes longer: topology/README.md), and resolving one
// probe's path must cost under 2 us.
//
//   ninja -C build topology_bench && build/bench/topology_bench

#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "topology/ecmp.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"
#include "topology/inventory_writer.h"
#include "topology/path_resolver.h"

namespace {

using namespace hostmesh::topology;

constexpr FabricShape kShape{.hosts = 4096, .rails = 8, .spines = 64};

const std::string& InventoryText() {
  static const std::string text = WriteInventoryYaml(GenerateInventory(kShape), {});
  return text;
}

const Topology& Fabric() {
  static const Topology topo = BuildTopology(GenerateInventory(kShape));
  return topo;
}

struct Probe {
  Ipv4 src;
  Ipv4 dst;
  std::vector<Hop> hops;
};

// Probes between two NICs of random hosts over random spines, with the hops a
// traceroute would report; `silent` blanks the spine hop (the graph fills it).
std::vector<Probe> Probes(bool silent) {
  const Topology& topo = Fabric();
  std::mt19937 rng(42);
  std::vector<Probe> probes;
  for (int i = 0; i < 1024; ++i) {
    const auto h = static_cast<DeviceId>(rng() % kShape.hosts);
    const auto r1 = rng() % kShape.rails;
    const auto r2 = (r1 + 1 + rng() % (kShape.rails - 1)) % kShape.rails;
    const Ipv4 src = topo.interface(topo.device(h).interfaces[r1]).ip;
    const Ipv4 dst = topo.interface(topo.device(h).interfaces[r2]).ip;
    const auto paths = EnumerateEcmpPaths(topo, src, dst);
    Probe p{src, dst, ExpectedHops(topo, paths[rng() % paths.size()], src)};
    if (silent) p.hops[1].reset();
    probes.push_back(std::move(p));
  }
  return probes;
}

void BM_GenerateAndBuild(benchmark::State& state) {
  for (auto _ : state) {
    Topology topo = BuildTopology(GenerateInventory(kShape));
    benchmark::DoNotOptimize(topo.links().size());
  }
}
BENCHMARK(BM_GenerateAndBuild)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_LoadYamlText(benchmark::State& state) {
  const std::string& text = InventoryText();
  for (auto _ : state) {
    Topology topo = LoadInventory(text, "bench.yaml");
    benchmark::DoNotOptimize(topo.links().size());
  }
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
}
BENCHMARK(BM_LoadYamlText)->Unit(benchmark::kMillisecond)->Iterations(3);

void Resolve(benchmark::State& state, bool silent) {
  const std::vector<Probe> probes = Probes(silent);
  const PathResolver resolver(Fabric());
  ResolvedPath out;
  size_t i = 0;
  for (auto _ : state) {
    const Probe& p = probes[i++ % probes.size()];
    resolver.Resolve(p.src, p.dst, p.hops, &out);
    if (out.status != PathStatus::kOk) state.SkipWithError("unexpected status");
    benchmark::DoNotOptimize(out.links.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
void BM_ResolveAllHops(benchmark::State& state) {
  Resolve(state, false);
}
void BM_ResolveSpineHopSilent(benchmark::State& state) {
  Resolve(state, true);
}
BENCHMARK(BM_ResolveAllHops);
BENCHMARK(BM_ResolveSpineHopSilent);

}  // namespace
