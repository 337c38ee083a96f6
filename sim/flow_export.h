#pragma once

// Export of what the probes saw, for running any external localizer (007,
// NetBouncer, Flock, ...) on exactly the data both methods here were given.
// Files in the export folder (format in sim/README.md):
//   topology.yaml  the fabric inventory (the testbed's format)
//   faults.json    the ground truth: every fault with its times and target
//   flows.jsonl    one line per (window, probe 5-tuple): source and destination
//                  NIC, the 5-tuple, its traced path as link names, probes sent
//                  and lost, latency summary
// The latest traced path of each 5-tuple is kept for the run (memory grows
// with the 5-tuples ever probed: meant for suite-sized fleets).

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "sim/scenario.h"
#include "topology/path_resolver.h"

namespace hostmesh::sim {

class FlowExporter {
 public:
  // Throws std::runtime_error when the folder cannot be written.
  FlowExporter(const Fleet& fleet, const Scenario& scenario, const std::filesystem::path& dir);
  void Add(std::int64_t slice_end_ns, const std::vector<HostOutput>& uploads);
  void Finish();

 private:
  using Key = std::tuple<std::int64_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint16_t>;
  struct Flow {
    std::uint64_t sent = 0, lost = 0;
    std::int64_t lat_min = 0, lat_max = 0;
    double lat_sum = 0;
    std::uint64_t lat_n = 0;
  };
  void Flush(std::int64_t before_window_ns);

  const Fleet& fleet_;
  std::int64_t window_ns_;
  std::int64_t timeout_ns_;
  topology::PathResolver resolver_;
  std::ofstream flows_;
  std::map<Key, Flow> open_;  // (window start, host, src, dst, sport)
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint16_t>,
           std::vector<LinkId>>
      paths_;
};

}  // namespace hostmesh::sim
