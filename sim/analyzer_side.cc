#include "sim/analyzer_side.h"

#include "agent/main/tracing_glue.h"
#include "agent/main/wiring.h"
#include "analyzer/analysis/topology_adapter.h"
#include "analyzer/main/feed_convert.h"
#include "sim/diagnosis_side.h"

namespace hostmesh::sim {

AnalyzerSide::AnalyzerSide(const Fleet& fleet, const analysis::AnalysisConfig& config)
    : fleet_(fleet),
      analysis_(config, analysis::FabricMapFrom(fleet.topology())),
      incidents_(config),
      resolver_(fleet.topology()),
      host_id_(fleet.hosts().size(), analysis::kUnknown) {}

analysis::HostId AnalyzerSide::HostIdOf(std::uint32_t fleet_host) const {
  return host_id_[fleet_host];
}

void AnalyzerSide::Ingest(std::uint32_t fleet_host, const HostOutput& upload) {
  analysis::HostId& id = host_id_[fleet_host];
  if (id == analysis::kUnknown) {
    id = static_cast<analysis::HostId>(fleet_host_of_.size());
    fleet_host_of_.push_back(fleet_host);
  }
  if (upload.hello) analysis_.SetRails(id, analyzer::app::RailsFromHello(*upload.hello));
  // Paths first, as the feed applies a batch: a result may be the first of a
  // freshly traced 5-tuple.
  for (const v1::PathReport& wire : upload.wire_paths) {
    switch (analyzer::app::ToPathRecord(id, wire, resolver_, scratch_, path_)) {
      case analyzer::app::PathConversion::kContinued:
        ++counts_.paths_continued;
        [[fallthrough]];
      case analyzer::app::PathConversion::kResolved:
        ++counts_.paths_resolved;
        analysis_.AddPath(path_);
        break;
      case analyzer::app::PathConversion::kCutShort:
        ++counts_.paths_cut_short;
        analysis_.AddPath(path_);
        break;
      case analyzer::app::PathConversion::kUnresolved:
        ++counts_.paths_unresolved;
        break;
    }
  }
  records_.clear();
  for (const agent::ProbeResult& result : upload.results) {
    records_.push_back(analyzer::app::ToProbeRecord(id, agent::app::ToProto(result)));
    const analysis::ProbeRecord& r = records_.back();
    if (r.send_failed && diagnosis_ != nullptr) {
      diagnosis_->AddSendFailure(id, r.src_nic, r.send_time_ns);
    }
  }
  analysis_.AddResults(records_);
  counts_.results += upload.results.size();
}

std::vector<analysis::WindowReport> AnalyzerSide::Advance(std::int64_t wall_ns) {
  std::vector<analysis::WindowReport> reports = analysis_.Advance(wall_ns);
  for (const analysis::WindowReport& report : reports) {
    incidents_.Update(report);
    if (diagnosis_ != nullptr) diagnosis_->Diagnose(report, fleet_host_of_, incidents_);
  }
  return reports;
}

}  // namespace hostmesh::sim
