#include "sim/diagnosis_side.h"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "agent/telemetry/telemetry_proto.h"
#include "analyzer/telemetry/telemetry_rollup.h"

namespace hostmesh::sim {

DiagnosisSide::DiagnosisSide(const Fleet& fleet, const FaultSet& faults,
                             std::int64_t wall_offset_ns, std::int64_t window_ns)
    : fleet_(fleet),
      model_(fleet, faults),
      wall_offset_ns_(wall_offset_ns),
      fabric_(fleet.topology()),
      send_failures_(window_ns) {
  for (std::uint32_t h = 0; h < fleet.hosts().size(); ++h) host_by_name_[fleet.hosts()[h].name] = h;
}

void DiagnosisSide::Sample(std::int64_t from, std::int64_t to,
                           const std::vector<std::uint8_t>& running) {
  // The first end after `from`: phase + k period.
  std::int64_t end = from - (from - kPhaseNs) % kPeriodNs + kPeriodNs;
  if (from < kPhaseNs) end = kPhaseNs;
  for (; end <= to; end += kPeriodNs) {
    const std::int64_t start = std::max<std::int64_t>(0, end - kPeriodNs);
    for (std::uint32_t h = 0; h < fleet_.hosts().size(); ++h) {
      if (!running[h]) continue;
      for (std::uint32_t n = 0; n < fleet_.hosts()[h].nic_links.size(); ++n) {
        const auto delta = agent::telemetry::Diff(model_.Read(h, n, start, wall_offset_ns_),
                                                  model_.Read(h, n, end, wall_offset_ns_));
        samples_.push_back({h, agent::telemetry::ToProto(n, delta)});
      }
    }
  }
}

void DiagnosisSide::Diagnose(const analysis::WindowReport& report,
                             const std::vector<std::uint32_t>& fleet_host_of,
                             analysis::IncidentTracker& incidents) {
  const topology::Topology& topo = fleet_.topology();
  const auto nic_name = [&](std::uint32_t host, std::uint32_t nic) -> std::optional<std::string> {
    const std::vector<LinkId>& links = fleet_.hosts()[host].nic_links;
    if (nic >= links.size()) return std::nullopt;
    return topo.interface(topo.link(links[nic]).lower).name;
  };
  const auto fleet_host = [&](analysis::HostId h) -> std::optional<std::uint32_t> {
    if (h >= fleet_host_of.size()) return std::nullopt;
    return fleet_host_of[h];
  };
  const analyzer::diagnosis::DiagnosisContext context = fabric_.Context(
      [](const std::string& host) { return host; },  // the agent id is the host's name
      [&](analysis::HostId h, analysis::NicId nic) -> std::optional<analyzer::diagnosis::NicRef> {
        const auto host = fleet_host(h);
        if (!host) return std::nullopt;
        const auto name = nic_name(*host, nic);
        if (!name) return std::nullopt;
        return analyzer::diagnosis::NicRef{fleet_.hosts()[*host].name, *name};
      },
      [&](analysis::HostId h) {
        const auto host = fleet_host(h);
        return host ? fleet_.hosts()[*host].name : "host" + std::to_string(h);
      });
  const analyzer::diagnosis::SendFailures send_failures = send_failures_.Take(report.start_ns);
  const analyzer::diagnosis::WindowFindings findings =
      diagnoser_.Find(report, incidents.open(), context, &send_failures);
  // The store's scan: samples whose end is in [start, end) of the window.
  analyzer::telemetry::TelemetryRollup rollup(
      {}, [&](std::string_view agent, std::uint64_t, std::uint32_t nic) {
        const auto it = host_by_name_.find(std::string(agent));
        return it == host_by_name_.end() ? std::nullopt : nic_name(it->second, nic);
      });
  while (!samples_.empty() && samples_.front().sample.end_ns() < report.start_ns) {
    samples_.pop_front();
  }
  // Of the agents the findings involve only, as the analyzer reads them.
  const std::vector<std::string> wanted = findings.Agents();
  const std::unordered_set<std::string_view> agents(wanted.begin(), wanted.end());
  for (const Stored& s : samples_) {
    if (s.sample.end_ns() >= report.end_ns) break;
    const std::string& agent = fleet_.hosts()[s.host].name;
    if (agents.contains(agent)) rollup.Add(agent, 1, s.sample);
  }
  const analyzer::diagnosis::TelemetryByNic telemetry =
      analyzer::diagnosis::IndexTelemetry(rollup.Rows());

  for (auto& [id, d] : diagnoser_.Diagnose(findings, telemetry, report.start_ns)) {
    incidents.SetDiagnosis(id, std::move(d));
  }
}

}  // namespace hostmesh::sim
