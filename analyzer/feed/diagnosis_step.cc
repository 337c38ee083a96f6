#include "analyzer/feed/diagnosis_step.h"

#include <string>
#include <unordered_map>

#include "analyzer/feed/telemetry_query.h"
#include "common/base/logging.h"

namespace hostmesh::analyzer::app {

DiagnosisStep::DiagnosisStep(const store::Store& store, const topology::Topology* inventory,
                             std::size_t max_telemetry_hosts)
    : store_(store), inventory_(inventory != nullptr), max_telemetry_hosts_(max_telemetry_hosts) {
  if (inventory != nullptr) fabric_.emplace(*inventory);
}

void DiagnosisStep::Run(const analysis::WindowReport& report,
                        const std::vector<api::HostInfo>& hosts,
                        analysis::IncidentTracker& incidents,
                        const std::shared_ptr<const topology::Topology>& learned,
                        const diagnosis::SendFailures& send_failures) {
  if (!inventory_ && learned && learned.get() != learned_) {
    fabric_.emplace(learned);
    learned_ = learned.get();
  }
  const std::vector<const analysis::Incident*> open = incidents.open();
  if (open.empty()) {
    diagnoser_.Observe(report);  // which RNICs answer, the cluster's usual tail
    return;
  }

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
  const diagnosis::WindowFindings findings = diagnoser_.Find(report, open, context, &send_failures);
  if (findings.slots.empty()) return;

  const auto log = GetLogger("analyzer");
  std::vector<std::string> agents = findings.Agents();
  if (agents.size() > max_telemetry_hosts_) {
    telemetry_hosts_capped_ += agents.size() - max_telemetry_hosts_;
    if (!warned_capped_) {
      log->warn(
          "diagnosis of window {} reads the NIC telemetry of {} of the {} hosts its incidents "
          "involve (the cap): the others' counters are left out (warned once until a window "
          "fits)",
          report.start_ns / 1'000'000'000, max_telemetry_hosts_, agents.size());
    }
    warned_capped_ = true;
    agents.resize(max_telemetry_hosts_);
  } else {
    warned_capped_ = false;
  }
  const api::TelemetryAnswer answer =
      QueryAgentsTelemetry(store_, report.start_ns, report.end_ns, agents);
  if (!answer.error.empty()) {
    ++telemetry_errors_;
    log->warn("diagnosis of window {} without NIC counters: telemetry scan failed ({})",
              report.start_ns / 1'000'000'000, answer.error);
  }
  const diagnosis::TelemetryByNic telemetry = diagnosis::IndexTelemetry(answer.rows);
  for (auto& [id, d] : diagnoser_.Diagnose(findings, telemetry, report.start_ns)) {
    incidents.SetDiagnosis(id, std::move(d));
  }
}

}  // namespace hostmesh::analyzer::app
