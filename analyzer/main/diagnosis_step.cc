#include "analyzer/main/diagnosis_step.h"

#include <limits>
#include <string>
#include <unordered_map>

#include "analyzer/main/telemetry_query.h"
#include "common/base/logging.h"

namespace hostmesh::analyzer::app {

DiagnosisStep::DiagnosisStep(const store::Store& store, const topology::Topology* topology)
    : store_(store) {
  if (topology != nullptr) fabric_.emplace(*topology);
}

void DiagnosisStep::Run(const analysis::WindowReport& report,
                        const std::vector<api::HostInfo>& hosts,
                        analysis::IncidentTracker& incidents) {
  const std::vector<const analysis::Incident*> open = incidents.open();
  if (open.empty()) return;
  api::TelemetryQuery query;
  query.from_ns = report.start_ns;
  query.to_ns = report.end_ns;
  query.limit = std::numeric_limits<std::size_t>::max();
  const api::TelemetryAnswer answer = QueryTelemetry(store_, query);
  if (!answer.error.empty()) {
    ++telemetry_errors_;
    GetLogger("analyzer")
        ->warn("diagnosis of window {} without NIC counters: telemetry scan failed ({})",
               report.start_ns / 1'000'000'000, answer.error);
  }
  const diagnosis::TelemetryByNic telemetry = diagnosis::IndexTelemetry(answer.rows);

  std::unordered_map<std::string, std::string> agent_of_host;
  for (const api::HostInfo& h : hosts) agent_of_host.emplace(h.host, h.agent_id);
  const auto nic_of = [&hosts](analysis::HostId host,
                               analysis::NicId nic) -> std::optional<diagnosis::NicRef> {
    if (host >= hosts.size() || nic >= hosts[host].nics.size()) return std::nullopt;
    return diagnosis::NicRef{hosts[host].agent_id, hosts[host].nics[nic].name};
  };
  const auto host_name = [&hosts](analysis::HostId host) {
    return host < hosts.size() ? hosts[host].host : "host" + std::to_string(host);
  };
  diagnosis::DiagnosisContext context;
  if (fabric_) {
    context = fabric_->Context(
        [&agent_of_host](const std::string& host) {
          const auto it = agent_of_host.find(host);
          return it == agent_of_host.end() ? std::string() : it->second;
        },
        nic_of, host_name);
  } else {
    context.nic_of = nic_of;
  }
  for (auto& [id, d] : diagnoser_.Diagnose(report, open, telemetry, context)) {
    incidents.SetDiagnosis(id, std::move(d));
  }
}

}  // namespace hostmesh::analyzer::app
