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
#include "topology/learned_graph.h"
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

// Without an inventory: the same fabric learned from the Hellos of every host,
// a trace from every NIC (so every rail switch port answered) and one per
// (rail, rail, spine) (so every fabric link did), each twice (merges want two).
void LearnTrace(FabricLearner& l, DeviceId h, size_t a, size_t b, const std::vector<LinkId>& path) {
  const Topology& topo = Fabric();
  const Ipv4 src = topo.interface(topo.device(h).interfaces[a]).ip;
  const Ipv4 dst = topo.interface(topo.device(h).interfaces[b]).ip;
  std::vector<Hop> hops = ExpectedHops(topo, path, src);
  hops.emplace_back(dst);
  ResolvedPath out;
  l.Add(topo.device(h).name, src, dst, hops, nullptr, &out);
}

FabricLearner& Learned() {
  static FabricLearner* learner = [] {
    auto* l = new FabricLearner();
    const Topology& topo = Fabric();
    const auto rails = static_cast<size_t>(kShape.rails);
    for (DeviceId h = 0; h < static_cast<DeviceId>(kShape.hosts); ++h) {
      for (size_t r = 0; r < rails; ++r) {
        const Interface& nic = topo.interface(topo.device(h).interfaces[r]);
        l->AddNic(topo.device(h).name, nic.name, nic.ip, static_cast<int>(r));
      }
    }
    for (int round = 0; round < 2; ++round) {
      for (size_t a = 0; a < rails; ++a) {
        for (size_t b = 0; b < rails; ++b) {
          if (a == b) continue;
          const auto& host0 = topo.device(0).interfaces;
          for (const auto& path :
               EnumerateEcmpPaths(topo, topo.interface(host0[a]).ip, topo.interface(host0[b]).ip)) {
            LearnTrace(*l, 0, a, b, path);
          }
        }
      }
      for (DeviceId h = 1; h < static_cast<DeviceId>(kShape.hosts); ++h) {
        for (size_t a = 0; a < rails; ++a) {
          const auto& nics = topo.device(h).interfaces;
          const size_t b = (a + 1) % rails;
          LearnTrace(*l, h, a, b,
                     EnumerateEcmpPaths(topo, topo.interface(nics[a]).ip,
                                        topo.interface(nics[b]).ip, 1)[0]);
        }
      }
    }
    return l;
  }();
  return *learner;
}

void BM_LearnedBuild(benchmark::State& state) {
  FabricLearner& learner = Learned();
  for (auto _ : state) {
    Topology topo = learner.Build();
    benchmark::DoNotOptimize(topo.links().size());
  }
  state.counters["links"] = static_cast<double>(learner.link_count());
}
BENCHMARK(BM_LearnedBuild)->Unit(benchmark::kMillisecond)->Iterations(3);

// One path report into a fabric learned already: learn (nothing new) and resolve.
void LearnAndResolve(benchmark::State& state, bool silent) {
  const std::vector<Probe> probes = Probes(silent);
  FabricLearner& learner = Learned();
  const Topology graph = learner.Build();
  const Topology& topo = Fabric();
  std::vector<std::string> hosts;
  for (const Probe& p : probes)
    hosts.push_back(topo.device(topo.DeviceOf(topo.FindInterface(p.src))).name);
  std::vector<std::vector<Hop>> reached;  // the destination's (inferred) answer at the end
  for (const Probe& p : probes) {
    reached.push_back(p.hops);
    reached.back().emplace_back(p.dst);
  }
  ResolvedPath out;
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ % probes.size();
    learner.Add(hosts[k], probes[k].src, probes[k].dst, reached[k], &graph, &out);
    if (out.status != PathStatus::kOk) state.SkipWithError("unexpected status");
    benchmark::DoNotOptimize(out.links.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.counters["merges"] = static_cast<double>(learner.stats().merges);
}
void BM_LearnedAllHops(benchmark::State& state) {
  LearnAndResolve(state, false);
}
void BM_LearnedSpineHopSilent(benchmark::State& state) {
  LearnAndResolve(state, true);
}
BENCHMARK(BM_LearnedAllHops);
BENCHMARK(BM_LearnedSpineHopSilent);

}  // namespace
