#pragma once

// The analyzer's half of the simulation: uploads go through the conversion the
// gRPC ingest uses (agent ToProto -> hostmesh.v1 -> analyzer feed_convert, paths
// resolved on the fabric by topology::PathResolver), into the real Analysis and
// IncidentTracker. Host ids are handed out in order of first upload, as the
// analyzer's feed does.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/analysis/analysis.h"
#include "analyzer/analysis/incidents.h"
#include "sim/fleet.h"
#include "sim/host_agent.h"
#include "topology/path_resolver.h"

namespace hostmesh::sim {

class DiagnosisSide;

struct IngestCounts {
  std::uint64_t results = 0;
  std::uint64_t paths_resolved = 0;
  std::uint64_t paths_unresolved = 0;
  // Cut short by a gray link: continued by the one shortest way on (also
  // resolved), or left out with several ways on (the previous path stands).
  std::uint64_t paths_continued = 0;
  std::uint64_t paths_cut_short = 0;
};

// The analyzer's ingest conversion of an upload's path reports (ToPathRecord
// on the fabric's resolver). It reads nothing the analysis writes, so it runs
// ahead of ingest on the hosts' threads, one converter per thread: the
// analyzer, too, converts on its ingest threads, outside its analysis loop.
class PathConverter {
 public:
  explicit PathConverter(const topology::Topology& topology) : resolver_(topology) {}
  // Fills upload.converted from upload.wire_paths. With `spare`, the wire
  // messages are then swapped with it and cleared there: a thread that runs
  // host after host (swapping `spare` in before each) reuses one warm set of
  // messages instead of every host's own, cold by its next slice.
  void Convert(HostOutput& upload,
               google::protobuf::RepeatedPtrField<v1::PathReport>* spare = nullptr);

 private:
  topology::PathResolver resolver_;
  topology::ResolvedPath scratch_;
};

class AnalyzerSide {
 public:
  AnalyzerSide(const Fleet& fleet, const analysis::AnalysisConfig& config);

  // One host's upload (what it produced in one slice; paths as `wire_paths`,
  // converted here unless PathConverter did it ahead).
  void Ingest(std::uint32_t fleet_host, HostOutput& upload);
  // Incidents are diagnosed by `diagnosis` (may be null: not diagnosed) after each window.
  void AttachDiagnosis(DiagnosisSide* diagnosis) { diagnosis_ = diagnosis; }
  // Judges the windows due at `wall_ns`; incidents are updated.
  std::vector<analysis::WindowReport> Advance(std::int64_t wall_ns);

  // The analyzer's host id of a fleet host; kUnknown before its first upload.
  analysis::HostId HostIdOf(std::uint32_t fleet_host) const;
  // The fleet host of each analyzer host id.
  const std::vector<std::uint32_t>& fleet_hosts() const { return fleet_host_of_; }

  const analysis::Analysis& analysis() const { return analysis_; }
  const analysis::IncidentTracker& incidents() const { return incidents_; }
  const IngestCounts& counts() const { return counts_; }

 private:
  const Fleet& fleet_;
  analysis::Analysis analysis_;
  analysis::IncidentTracker incidents_;
  PathConverter converter_;
  HostOutput unconverted_;                      // an upload not converted ahead, converted here
  std::vector<analysis::ProbeRecord> records_;  // one upload's, reused
  std::vector<analysis::HostId> host_id_;       // by fleet host
  std::vector<std::uint32_t> fleet_host_of_;    // by host id
  IngestCounts counts_;
  DiagnosisSide* diagnosis_ = nullptr;
};

}  // namespace hostmesh::sim
