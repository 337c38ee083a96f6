#include "sim/bench.h"

#include <malloc.h>

#include <cstdio>
#include <string>

#include "topology/generator.h"

namespace hostmesh::sim {
namespace {

std::string Format(const char* format, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), format, args...);
  return buf;
}

double Mb(std::size_t bytes) {
  return static_cast<double>(bytes) / 1e6;
}

}  // namespace

SimConfig BenchConfig(const BenchOptions& options) {
  SimConfig c;
  c.shape = options.shape;
  c.duration_ns = options.duration_ns;
  c.seed = options.seed;
  c.threads = options.threads;
  c.background = {1e-5, 1e-4};
  const auto period = c.agent.ports.rotation_period;
  c.agent.ports.rotation_period = std::chrono::duration_cast<std::chrono::nanoseconds>(
      period / std::max(1.0, options.rotation_speedup));
  return c;
}

SimResult RunBench(const SimConfig& config, int memory_every_s, std::ostream& out) {
  const double simulated = static_cast<double>(config.duration_ns) / 1e9;
  out << "bench: " << topology::DescribeShape(config.shape) << ", " << Format("%.0f", simulated)
      << " s simulated, probe interval "
      << Format("%.0f ms", static_cast<double>(config.agent.probe.interval.count()) / 1e6)
      << ", port rotation every "
      << Format("%.1f s", static_cast<double>(config.agent.ports.rotation_period.count()) / 1e9)
      << ", " << config.threads << " host threads, seed " << config.seed << ", "
      << config.faults.size() << " faults\n"
      << std::flush;
  Simulation sim(config);
  out << "  memory (analyzer: path table and open windows; process: RSS and heap in use) and "
         "progress\n";
  out << "      min   paths   path MB  windows MB    RSS MB   heap MB    wall s  host cpu s  "
         "analyzer cpu s\n";
  const auto print = [&](const MemorySample& m) {
    out << Format("  %7.1f %7zu %9.1f %11.1f %9.1f %9.1f %9.1f %11.1f %15.1f\n",
                  static_cast<double>(m.at_ns) / 60e9, m.path_table_entries, Mb(m.path_table_bytes),
                  Mb(m.open_window_bytes), Mb(m.rss_bytes), Mb(m.heap_bytes), m.wall_seconds,
                  m.host_cpu_seconds, m.analyzer_seconds)
        << std::flush;
  };
  const SimResult r = sim.Run({}, {}, std::max(1, memory_every_s), print);
  out << Format("  wall %.1f s: %.2fx real time\n", r.wall_seconds, simulated / r.wall_seconds);
  out << Format("  cpu: hosts %.1f s (their phase %.1f s wall), analyzer %.1f s (its own thread)\n",
                r.host_cpu_seconds, r.host_wall_seconds, r.analyzer_seconds);
  out << Format(
      "  probes %llu (%.0f/s simulated), %.3f us of host CPU and %.3f us of analyzer "
      "CPU per probe\n",
      static_cast<unsigned long long>(r.probes), static_cast<double>(r.probes) / simulated,
      r.host_cpu_seconds * 1e6 / static_cast<double>(r.probes),
      r.analyzer_seconds * 1e6 / static_cast<double>(r.probes));
  return r;
}

}  // namespace hostmesh::sim
