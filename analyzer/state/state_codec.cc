#include "analyzer/state/state_codec.h"

namespace hostmesh::analyzer::state {
namespace {

void Fill(const analysis::Quantiles& q, v1::state::Quantiles* out) {
  out->set_count(q.count);
  out->set_p50_ns(q.p50);
  out->set_p90_ns(q.p90);
  out->set_p99_ns(q.p99);
  out->set_p999_ns(q.p999);
}

void Fill(const analysis::SlaRow& row, v1::state::SlaRow* out) {
  out->set_probes(row.probes);
  out->set_timeouts(row.timeouts);
  out->set_rnic_drops(row.rnic_drops);
  out->set_network_drops(row.network_drops);
  Fill(row.latency, out->mutable_latency());
  Fill(row.processing, out->mutable_processing());
}

void LinksOf(const analysis::Localization& loc,
             google::protobuf::RepeatedField<std::uint32_t>* out) {
  for (const analysis::Suspect& s : loc.culprits) {
    if (s.component.kind == analysis::Component::Kind::kLink) out->Add(s.component.link);
  }
}

}  // namespace

v1::state::WindowSummary SummaryOf(const analysis::WindowReport& r, const AgentOf& agent_of) {
  v1::state::WindowSummary out;
  out.set_start_ns(r.start_ns);
  out.set_end_ns(r.end_ns);
  out.set_results(r.results);
  out.set_present_hosts(static_cast<std::uint32_t>(r.present_hosts.size()));
  for (analysis::HostId h : r.absent_hosts) out.add_absent_agents(agent_of(h));
  Fill(r.sla.cluster, out.mutable_cluster());
  for (const analysis::RailSla& rail : r.sla.rails) {
    auto* row = out.add_rails();
    row->set_rail(rail.rail);
    Fill(rail.sla, row->mutable_sla());
  }
  for (const analysis::HostSla& host : r.sla.hosts) {
    auto* row = out.add_hosts();
    row->set_host(host.host);
    row->set_agent_id(agent_of(host.host));
    Fill(host.sla, row->mutable_sla());
  }
  for (const analysis::RnicStatus& rnic : r.rnics) {
    if (!rnic.anomalous) continue;
    auto* ref = out.add_anomalous_rnics();
    ref->set_host(rnic.host);
    ref->set_agent_id(agent_of(rnic.host));
    ref->set_nic(rnic.nic);
    ref->set_loss(rnic.loss);
  }
  LinksOf(r.loss, out.mutable_culprit_links());
  for (analysis::SwitchId s : r.loss.culprit_switches) out.add_culprit_switches(s);
  LinksOf(r.latency, out.mutable_latency_links());
  for (const analysis::ProcessingFlag& f : r.processing_flags) out.add_overloaded_hosts(f.host);
  out.set_coverage_fraction(r.coverage.fraction);
  out.set_traced_probes(r.coverage.traced_probes);
  out.set_untraced_probes(r.coverage.untraced_probes);
  return out;
}

std::string EncodeWindowSummary(const analysis::WindowReport& report, const AgentOf& agent_of) {
  return SummaryOf(report, agent_of).SerializeAsString();
}

std::optional<v1::state::WindowSummary> DecodeWindowSummary(std::string_view bytes) {
  v1::state::WindowSummary out;
  if (!out.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return std::nullopt;
  return out;
}

analysis::SlaRow SlaRowOf(const v1::state::SlaRow& in) {
  auto quantiles = [](const v1::state::Quantiles& q) {
    return analysis::Quantiles{q.count(), q.p50_ns(), q.p90_ns(), q.p99_ns(), q.p999_ns()};
  };
  analysis::SlaRow row;
  row.probes = in.probes();
  row.timeouts = in.timeouts();
  row.rnic_drops = in.rnic_drops();
  row.network_drops = in.network_drops();
  if (row.probes > 0) {
    row.rnic_drop_rate = static_cast<double>(row.rnic_drops) / static_cast<double>(row.probes);
    row.network_drop_rate =
        static_cast<double>(row.network_drops) / static_cast<double>(row.probes);
  }
  row.latency = quantiles(in.latency());
  row.processing = quantiles(in.processing());
  return row;
}

std::string EncodeIncident(const analysis::Incident& inc) {
  v1::state::IncidentRecord out;
  out.set_id(inc.id);
  out.set_kind(std::string(analysis::IncidentKindName(inc.kind)));
  auto* suspect = out.mutable_suspect();
  suspect->set_rnic(inc.suspect.kind == analysis::Component::Kind::kRnic);
  suspect->set_link(inc.suspect.link);
  suspect->set_host(inc.suspect.host);
  suspect->set_nic(inc.suspect.nic);
  out.set_summary(inc.summary);
  out.set_confidence(inc.confidence);
  out.set_open(inc.open);
  out.set_resolved_ns(inc.resolved_ns);
  out.set_merged_into(inc.merged_into);
  out.set_clean_windows(inc.clean_windows);
  out.set_unobserved_windows(inc.unobserved_windows);
  const analysis::IncidentEvidence& e = inc.evidence;
  out.set_failures(e.failures);
  out.set_good(e.good);
  out.set_votes(e.votes);
  out.set_loss(e.loss);
  out.set_processing_p90_ns(e.processing_p90_ns);
  out.set_fleet_median_p90_ns(e.fleet_median_p90_ns);
  for (const auto& path : e.example_paths) {
    out.add_example_paths()->mutable_links()->Add(path.begin(), path.end());
  }
  out.mutable_links()->Add(e.links.begin(), e.links.end());
  out.set_first_seen_ns(e.first_seen_ns);
  out.set_last_seen_ns(e.last_seen_ns);
  out.set_windows(e.windows);
  out.set_directions(e.directions);
  out.set_flaps(e.flaps);
  out.set_flap_period_s(e.flap_period_s);
  out.set_routed_around(e.routed_around);
  const analysis::IncidentDiagnosis& d = inc.diagnosis;
  if (!d.rule.empty()) {
    v1::state::Diagnosis& diagnosis = *out.mutable_diagnosis();
    diagnosis.set_type(d.type);
    diagnosis.set_rule(d.rule);
    diagnosis.set_evidence(d.evidence);
    diagnosis.set_window_start_ns(d.window_start_ns);
    for (const auto& [counter, delta] : d.counters) {
      v1::state::CounterMove& move = *diagnosis.add_counters();
      move.set_counter(counter);
      move.set_delta(delta);
    }
  }
  return out.SerializeAsString();
}

std::optional<analysis::Incident> DecodeIncident(std::string_view bytes) {
  v1::state::IncidentRecord in;
  if (!in.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return std::nullopt;
  const auto kind = analysis::IncidentKindFromName(in.kind());
  if (!kind || in.id() == 0) return std::nullopt;
  analysis::Incident inc;
  inc.id = in.id();
  inc.kind = *kind;
  inc.suspect.kind =
      in.suspect().rnic() ? analysis::Component::Kind::kRnic : analysis::Component::Kind::kLink;
  inc.suspect.link = in.suspect().link();
  inc.suspect.host = in.suspect().host();
  inc.suspect.nic = in.suspect().nic();
  inc.summary = in.summary();
  inc.confidence = in.confidence();
  inc.open = in.open();
  inc.resolved_ns = in.resolved_ns();
  inc.merged_into = in.merged_into();
  inc.clean_windows = in.clean_windows();
  inc.unobserved_windows = in.unobserved_windows();
  analysis::IncidentEvidence& e = inc.evidence;
  e.failures = in.failures();
  e.good = in.good();
  e.votes = in.votes();
  e.loss = in.loss();
  e.processing_p90_ns = in.processing_p90_ns();
  e.fleet_median_p90_ns = in.fleet_median_p90_ns();
  for (const auto& path : in.example_paths()) {
    e.example_paths.emplace_back(path.links().begin(), path.links().end());
  }
  e.links.assign(in.links().begin(), in.links().end());
  e.first_seen_ns = in.first_seen_ns();
  e.directions = static_cast<std::uint8_t>(in.directions() & 3);
  e.flaps = in.flaps();
  e.flap_period_s = in.flap_period_s();
  e.routed_around = in.routed_around();
  e.last_seen_ns = in.last_seen_ns();
  e.windows = in.windows();
  if (in.has_diagnosis()) {
    const v1::state::Diagnosis& d = in.diagnosis();
    inc.diagnosis.type = d.type().empty() ? "unclassified" : d.type();
    inc.diagnosis.rule = d.rule();
    inc.diagnosis.evidence = d.evidence();
    inc.diagnosis.window_start_ns = d.window_start_ns();
    for (const v1::state::CounterMove& move : d.counters()) {
      inc.diagnosis.counters.emplace_back(move.counter(), move.delta());
    }
  }
  return inc;
}

}  // namespace hostmesh::analyzer::state
