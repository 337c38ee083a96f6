// ns per FabricRouter::Route on fleet-sized fabrics (the simulator calls it for
// every probe): build/tests/sim/ecmp/sim_ecmp_bench

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "sim/ecmp/fabric_router.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"

namespace hostmesh::sim::ecmp {
namespace {

struct Probe {
  Ipv4 src;
  Ipv4 dst;
  std::uint16_t sport;
};

// Probes between the NICs of one host, as the agent sends them, random hosts
// and source ports; more than fit in L1 so the lookups are not all hot.
std::vector<Probe> Probes(const topology::Topology& topo, int hosts, int rails) {
  std::mt19937 rng(42);
  std::vector<Probe> probes(1 << 16);
  for (Probe& p : probes) {
    const auto h = static_cast<std::size_t>(rng() % static_cast<unsigned>(hosts));
    const auto a = static_cast<std::size_t>(rng() % static_cast<unsigned>(rails));
    const auto b =
        (a + 1 + rng() % static_cast<unsigned>(rails - 1)) % static_cast<unsigned>(rails);
    const topology::Device& host = topo.devices()[h];
    p = {topo.interface(host.interfaces[a]).ip, topo.interface(host.interfaces[b]).ip,
         static_cast<std::uint16_t>(49152 + rng() % 16384)};
  }
  return probes;
}

// `dead_every`: every that many fabric links one is dead (0: none).
void Run(benchmark::State& state, const topology::FabricShape& shape, LinkId dead_every) {
  const topology::Topology topo = topology::BuildTopology(topology::GenerateInventory(shape));
  const FabricRouter router(topo, 1);
  std::vector<LinkId> dead_ids;
  LinkId fabric_links = 0;
  for (LinkId l = 0; l < topo.links().size(); ++l) {
    if (topo.link(l).kind != topology::LinkKind::kFabric) continue;
    if (dead_every != 0 && fabric_links % dead_every == 0) dead_ids.push_back(l);
    ++fabric_links;
  }
  const bool with_dead = dead_every != 0;
  const DeadLinks dead = router.Reconverge(dead_ids);
  const std::vector<Probe> probes = Probes(topo, shape.hosts, shape.rails);
  std::size_t i = 0;
  std::size_t links = 0;
  for (auto _ : state) {
    const Probe& p = probes[i++ & (probes.size() - 1)];
    PathLinks path;
    links += router.Route(p.src, p.dst, p.sport, 4791, with_dead ? &dead : nullptr, path);
    benchmark::DoNotOptimize(path);
  }
  state.counters["links_per_route"] =
      benchmark::Counter(static_cast<double>(links) / static_cast<double>(state.iterations()));
}

const topology::FabricShape k2Tier{4096, 8, 64, 16};
const topology::FabricShape k3Tier{4096, 8, 32, 16, 3, 16};

BENCHMARK_CAPTURE(Run, 2tier_4096x8x64, topology::FabricShape{4096, 8, 64, 1}, 0);
BENCHMARK_CAPTURE(Run, 2tier_4096x8x64_16pods, k2Tier, 0);
BENCHMARK_CAPTURE(Run, 3tier_4096x8x32_16pods_16aggs, k3Tier, 0);
// A few links down, as during a fault: 4 of 8192 (2 tiers), 4 of 6144 (3 tiers).
BENCHMARK_CAPTURE(Run, 2tier_4_dead_links, k2Tier, 2048);
BENCHMARK_CAPTURE(Run, 3tier_4_dead_links, k3Tier, 1536);
// One fabric link in 64 down: nearly every route has lost a nexthop.
BENCHMARK_CAPTURE(Run, 2tier_every_64th_link_dead, k2Tier, 64);
BENCHMARK_CAPTURE(Run, 3tier_every_64th_link_dead, k3Tier, 64);

}  // namespace
}  // namespace hostmesh::sim::ecmp

BENCHMARK_MAIN();
