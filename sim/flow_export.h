#pragma once

// Export of what the probes saw, for running any external localizer (007,
// NetBouncer, Flock, ...) on exactly the data the analyzer was given.
// Files in the export folder (format in sim/README.md):
//   topology.yaml  the fabric inventory (the testbed's format)
//   faults.json    the ground truth: every fault with its times and target
//   flows.jsonl    one line per (window, probe 5-tuple): source and destination
//                  NIC, the 5-tuple, its path as the analyzer held it (traces
//                  cut short included: unknown links null, candidates listed),
//                  probes sent and lost, latency summary
// A window is written when the analyzer judges it (its end + grace), with the
// results the analyzer had by then; later ones are late for both, counted.
// The latest path of each 5-tuple is kept for the run (memory grows with the
// 5-tuples ever probed: meant for suite-sized fleets).

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/analysis/types.h"
#include "sim/analyzer_side.h"
#include "sim/scenario.h"

namespace hostmesh::sim {

class FlowExporter {
 public:
  // Throws std::runtime_error when the folder cannot be written.
  FlowExporter(const Fleet& fleet, const Scenario& scenario, const std::filesystem::path& dir);
  // One slice's uploads, as the analyzer receives them at `slice_end_ns`.
  void Add(std::int64_t slice_end_ns, const std::vector<HostOutput>& uploads);
  void Finish();
  // Results of windows already written (the analyzer took them as late).
  std::uint64_t late_results() const { return late_; }

 private:
  using Key = std::tuple<std::int64_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint16_t>;
  struct Flow {
    std::uint64_t sent = 0, lost = 0;
    std::int64_t lat_min = 0, lat_max = 0;
    double lat_sum = 0;
    std::uint64_t lat_n = 0;
  };
  struct Path {
    analyzer::app::PathConversion conversion;
    analysis::PathRecord record;
  };
  void AddPath(std::uint32_t host, const ConvertedPath& path);
  // Writes the windows ending by `judged_ns` (their analyzer's judging time).
  void Flush(std::int64_t judged_ns);

  const Fleet& fleet_;
  std::int64_t window_ns_;
  std::int64_t grace_ns_;
  PathConverter converter_;  // for an upload not converted ahead
  HostOutput unconverted_;
  std::ofstream flows_;
  std::map<Key, Flow> open_;  // (window start, host, src, dst, sport)
  std::int64_t written_before_ns_ = std::numeric_limits<std::int64_t>::min();
  std::uint64_t late_ = 0;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint16_t>, Path> paths_;
};

}  // namespace hostmesh::sim
