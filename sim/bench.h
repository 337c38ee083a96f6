#pragma once

// `hostmesh-sim bench`: the simulator's speed and the analyzer's memory over a
// fault-free fleet under background loss (sim/README.md, "Benchmark"). Speed
// is simulated seconds per wall second, with the CPU of the hosts' phase and
// of the analyzer's; memory is sampled every so many simulated seconds.

#include <cstdint>
#include <ostream>

#include "sim/simulation.h"

namespace hostmesh::sim {

struct BenchOptions {
  topology::FabricShape shape{10'000, 8, 32, 10, 2, 0};
  std::int64_t duration_ns = 600'000'000'000;
  std::uint64_t seed = 1;
  int threads = 2;
  // Port rotation this many times faster than the agent's default (10: a
  // day's 5-tuple churn in 2.4 hours).
  double rotation_speedup = 1;
  int memory_every_s = 60;
};

SimConfig BenchConfig(const BenchOptions& options);
// Runs `config` (BenchConfig, or a suite scenario's) and prints its speed
// figures and memory series to `out`.
SimResult RunBench(const SimConfig& config, int memory_every_s, std::ostream& out);

}  // namespace hostmesh::sim
