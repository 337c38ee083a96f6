#include "sim/analyzer_side.h"

#include "agent/upload/wire_messages.h"
#include "analyzer/analysis/topology_adapter.h"
#include "analyzer/feed/feed_convert.h"
#include "sim/diagnosis_side.h"

namespace hostmesh::sim {

AnalyzerSide::AnalyzerSide(const Fleet& fleet, const analysis::AnalysisConfig& config)
    : fleet_(fleet),
      analysis_(config, analysis::FabricMapFrom(fleet.topology())),
      incidents_(config),
      converter_(fleet.topology()),
      host_id_(fleet.hosts().size(), analysis::kUnknown) {}

void PathConverter::Convert(HostOutput& upload,
                            google::protobuf::RepeatedPtrField<v1::PathReport>* spare) {
  const auto n = static_cast<std::size_t>(upload.wire_paths.size());
  if (upload.converted.size() < n) upload.converted.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    ConvertedPath& c = upload.converted[i];
    c.conversion = analyzer::app::ToPathRecord(
        analysis::kUnknown, upload.wire_paths[static_cast<int>(i)], resolver_, scratch_, c.record);
  }
  upload.converted_count = n;
  upload.converted_ahead = true;
  if (spare != nullptr) {
    spare->Swap(&upload.wire_paths);
    spare->Clear();
  }
}

analysis::HostId AnalyzerSide::HostIdOf(std::uint32_t fleet_host) const {
  return host_id_[fleet_host];
}

void AnalyzerSide::Ingest(std::uint32_t fleet_host, HostOutput& upload) {
  analysis::HostId& id = host_id_[fleet_host];
  if (id == analysis::kUnknown) {
    id = static_cast<analysis::HostId>(fleet_host_of_.size());
    fleet_host_of_.push_back(fleet_host);
  }
  if (upload.hello) analysis_.SetRails(id, analyzer::app::RailsFromHello(*upload.hello));
  // Paths first, as the feed applies a batch: a result may be the first of a
  // freshly traced 5-tuple.
  HostOutput* converted = &upload;
  if (!upload.converted_ahead) {
    unconverted_.wire_paths = upload.wire_paths;
    converter_.Convert(unconverted_);
    converted = &unconverted_;
  }
  for (std::size_t i = 0; i < converted->converted_count; ++i) {
    ConvertedPath& c = converted->converted[i];
    c.record.host = id;
    switch (c.conversion) {
      case analyzer::app::PathConversion::kContinued:
        ++counts_.paths_continued;
        [[fallthrough]];
      case analyzer::app::PathConversion::kResolved:
        ++counts_.paths_resolved;
        analysis_.AddPath(c.record);
        break;
      case analyzer::app::PathConversion::kCutShort:
        ++counts_.paths_cut_short;
        analysis_.AddPath(c.record);
        break;
      case analyzer::app::PathConversion::kUnresolved:
        ++counts_.paths_unresolved;
        break;
    }
  }
  records_.clear();
  for (const agent::ProbeResult& result : upload.results) {
    records_.push_back(analyzer::app::ToProbeRecord(id, agent::upload::ToProto(result)));
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
