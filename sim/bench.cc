#include "sim/bench.h"

#include <malloc.h>
#include <sys/resource.h>

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
         "convert cpu s  analyzer cpu s\n";
  const auto print = [&](const MemorySample& m) {
    out << Format("  %7.1f %7zu %9.1f %11.1f %9.1f %9.1f %9.1f %11.1f %14.1f %15.1f\n",
                  static_cast<double>(m.at_ns) / 60e9, m.path_table_entries, Mb(m.path_table_bytes),
                  Mb(m.open_window_bytes), Mb(m.rss_bytes), Mb(m.heap_bytes), m.wall_seconds,
                  m.host_cpu_seconds, m.convert_cpu_seconds, m.analyzer_seconds)
        << std::flush;
  };
  const SimResult r = sim.Run({}, {}, std::max(1, memory_every_s), print);
  out << Format("  wall %.1f s: %.2fx real time\n", r.wall_seconds, simulated / r.wall_seconds);
  out << Format(
      "  cpu: hosts %.1f s and the analyzer's path conversion %.1f s (host threads; their phase "
      "%.1f s wall), analyzer %.1f s (its own thread)\n",
      r.host_cpu_seconds, r.convert_cpu_seconds, r.host_wall_seconds, r.analyzer_seconds);
  const double probes = static_cast<double>(r.probes);
  out << Format(
      "  probes %llu (%.0f/s simulated), per probe: %.3f us of host CPU, %.3f us of path "
      "conversion, %.3f us of analyzer CPU\n",
      static_cast<unsigned long long>(r.probes), probes / simulated,
      r.host_cpu_seconds * 1e6 / probes, r.convert_cpu_seconds * 1e6 / probes,
      r.analyzer_seconds * 1e6 / probes);
  // The process's CPU (every thread, setup included): what two idle cores
  // would have to do, so simulated / (cpu / 2) is their best real-time factor.
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  out << Format(
      "  process CPU %.1f s (user+sys, setup included): %.3f CPU-s per simulated s; on two "
      "idle cores at best %.2fx real time\n",
      cpu, cpu / simulated, simulated / (cpu / 2));
  // The second half alone: setup and the first pass of the tracers left out.
  if (r.memory.size() >= 3) {
    const MemorySample& a = r.memory[r.memory.size() / 2];
    const MemorySample& b = r.memory.back();
    const double span = static_cast<double>(b.at_ns - a.at_ns) / 1e9;
    const double hosts = b.host_cpu_seconds - a.host_cpu_seconds;
    const double convert = b.convert_cpu_seconds - a.convert_cpu_seconds;
    const double analyzer = b.analyzer_seconds - a.analyzer_seconds;
    out << Format(
        "  from minute %.1f to %.1f: %.3f CPU-s per simulated s (hosts %.3f, conversion %.3f, "
        "analyzer %.3f); RSS %.1f -> %.1f MB, heap %.1f -> %.1f MB\n",
        static_cast<double>(a.at_ns) / 60e9, static_cast<double>(b.at_ns) / 60e9,
        (hosts + convert + analyzer) / span, hosts / span, convert / span, analyzer / span,
        Mb(a.rss_bytes), Mb(b.rss_bytes), Mb(a.heap_bytes), Mb(b.heap_bytes));
  }
  // ru_maxrss is in KiB on Linux.
  out << Format("  peak RSS %.1f MB\n", static_cast<double>(usage.ru_maxrss) * 1024 / 1e6);
  return r;
}

}  // namespace hostmesh::sim
