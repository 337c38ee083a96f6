#include "analyzer/diagnosis/incident_diagnosis.h"

#include <algorithm>
#include <string_view>

namespace hostmesh::analyzer::diagnosis {
namespace {

using analysis::Component;
using analysis::IncidentKind;

const analysis::Suspect* FindSuspect(const analysis::Localization& loc, const Component& c) {
  for (const analysis::Suspect& s : loc.culprits) {
    if (s.component.kind != c.kind) continue;
    if (c.kind == Component::Kind::kLink ? s.component.link == c.link
                                         : s.component.host == c.host && s.component.nic == c.nic) {
      return &s;
    }
  }
  return nullptr;
}

// Latency over the path's usual latency: the cluster's median probe latency
// stands for a path's baseline, the hotspot's excess is on top of it.
double LatencyRatio(const analysis::Suspect* hot, const analysis::WindowReport& report) {
  const double base = report.sla.cluster.latency.p50;
  if (hot == nullptr || base <= 0) return 0;
  return (base + hot->added_latency_ns) / base;
}

bool IsRailSwitch(analysis::SwitchId sw, const DiagnosisContext& ctx) {
  return sw != analysis::kUnknown && ctx.switch_nics && !ctx.switch_nics(sw).empty();
}

// A rail switch's uplink: how many other uplinks the switch has, and how many
// of those are latency hotspots in the window.
void Uplink(analysis::LinkId link, const analysis::WindowReport& report,
            const DiagnosisContext& ctx, ProbeEvidence& p) {
  if (link >= ctx.links.size()) return;
  const analysis::SwitchId lower = ctx.links[link].lower;
  if (ctx.links[link].upper == analysis::kUnknown || !IsRailSwitch(lower, ctx)) return;
  p.rail_uplink = true;
  for (analysis::LinkId l = 0; l < ctx.links.size(); ++l) {
    if (l == link || ctx.links[l].lower != lower || ctx.links[l].upper == analysis::kUnknown) {
      continue;
    }
    ++p.sibling_uplinks;
    for (const analysis::Suspect& s : report.latency.culprits) {
      if (s.component.kind == Component::Kind::kLink && s.component.link == l) {
        ++p.sibling_uplinks_hot;
        break;
      }
    }
  }
}

std::vector<NicRef> RailNics(analysis::LinkId link, const DiagnosisContext& ctx) {
  if (link >= ctx.links.size() || !ctx.switch_nics) return {};
  const analysis::SwitchId lower = ctx.links[link].lower;
  return lower == analysis::kUnknown ? std::vector<NicRef>{} : ctx.switch_nics(lower);
}

void FromSuspect(const analysis::Suspect& s, ProbeEvidence& p) {
  p.probes = s.failures + s.good;
  p.failures = s.failures;
  p.bursts = p.bursts || s.flapping;
  if (s.flapping) p.bursts_seen = s.flaps;
  for (const analysis::PortOutcome& port : s.ports) {
    p.ports.push_back({port.port, port.probes, port.failures});
  }
}

// An RNIC or link incident (lossy, down, flapping, hot) as the window saw it.
bool ComponentFinding(const analysis::Incident& inc, const analysis::WindowReport& report,
                      const DiagnosisContext& ctx, bool failed_from_start,
                      const SendFailures* send_failures, IncidentFinding& f) {
  ProbeEvidence& p = f.probes;
  const Component& c = inc.suspect;
  const bool latency = inc.kind == IncidentKind::kLatencyHotspot;
  p.symptom = latency ? Symptom::kLatency : Symptom::kLoss;
  const analysis::Suspect* lossy = FindSuspect(report.loss, c);
  const analysis::Suspect* hot = FindSuspect(report.latency, c);
  if (latency ? hot == nullptr : lossy == nullptr) return false;
  if (lossy != nullptr) FromSuspect(*lossy, p);
  if (latency) p.probes = hot->good;
  p.latency_ratio = LatencyRatio(hot, report);
  if (c.kind == Component::Kind::kRnic) {
    p.subject = Subject::kRnic;
    if (ctx.nic_of) f.nic = ctx.nic_of(c.host, c.nic);
    for (const analysis::RnicStatus& r : report.rnics) {
      if (r.host != c.host || r.nic != c.nic || latency) continue;
      p.probes = r.probes;
      p.failures = r.timeouts;
      p.sent = r.probes - std::min(r.probes, r.probes_to);
    }
    p.failed_from_start = failed_from_start;
    if (send_failures != nullptr && !latency) {
      const auto it = send_failures->find(RnicKey(c.host, c.nic));
      if (it != send_failures->end()) p.send_failures = it->second;
    }
  } else {
    p.subject = Subject::kLink;
    if (ctx.link_nic) f.nic = ctx.link_nic(c.link);
    f.rail_nics = RailNics(c.link, ctx);
    if (latency) Uplink(c.link, report, ctx, p);
  }
  return true;
}

// Drops at a switch: a link-like subject whose rail NICs are the switch's.
bool SwitchFinding(const analysis::Incident& inc, const analysis::WindowReport& report,
                   const DiagnosisContext& ctx, IncidentFinding& f) {
  ProbeEvidence& p = f.probes;
  const Component& c = inc.suspect;
  const analysis::SwitchId sw = c.link;
  const analysis::SwitchRank* rank = nullptr;
  for (const analysis::SwitchRank& r : report.loss.switches) {
    if (r.id == sw && r.culprit) rank = &r;
  }
  if (rank == nullptr) return false;
  p.subject = Subject::kLink;
  p.symptom = Symptom::kLoss;
  p.failures = inc.evidence.failures;
  p.probes = inc.evidence.failures + inc.evidence.good;
  if (p.failures == 0) p.failures = 1;  // blamed: it dropped something
  if (p.probes < p.failures) p.probes = p.failures;
  double worst = 0;
  for (const analysis::Suspect& s : report.latency.culprits) {
    if (s.component.kind != Component::Kind::kLink || s.component.link >= ctx.links.size()) {
      continue;
    }
    const auto& ends = ctx.links[s.component.link];
    if (ends.lower == sw || ends.upper == sw) worst = std::max(worst, LatencyRatio(&s, report));
  }
  p.latency_ratio = worst;
  if (ctx.switch_nics) f.rail_nics = ctx.switch_nics(sw);
  return true;
}

bool ProcessingFinding(const analysis::Incident& inc, const analysis::WindowReport& report,
                       IncidentFinding& f) {
  ProbeEvidence& p = f.probes;
  const Component& c = inc.suspect;
  const analysis::ProcessingFlag* flag = nullptr;
  for (const analysis::ProcessingFlag& pf : report.processing_flags) {
    if (pf.host == c.host) flag = &pf;
  }
  if (flag == nullptr) return false;
  p.subject = Subject::kHost;
  p.symptom = Symptom::kProcessingDelay;
  p.probes = flag->samples;
  p.processing_ratio = flag->p90_ns / std::max(flag->fleet_median_p90_ns, 1.0);
  // The network is fine when the analysis blamed none of the host's RNICs.
  p.network_fine = true;
  for (const analysis::RnicStatus& r : report.rnics) {
    if (r.host == c.host && r.state != analysis::RnicState::kOk) p.network_fine = false;
  }
  for (const analysis::Localization* loc : {&report.loss, &report.latency}) {
    for (const analysis::Suspect& s : loc->culprits) {
      if (s.component.kind == Component::Kind::kRnic && s.component.host == c.host) {
        p.network_fine = false;
      }
    }
  }
  return true;
}

}  // namespace

std::optional<IncidentFinding> FindingOf(const analysis::Incident& inc,
                                         const analysis::WindowReport& report,
                                         const DiagnosisContext& ctx, bool failed_from_start,
                                         const SendFailures* send_failures) {
  if (!inc.open || inc.evidence.last_seen_ns != report.end_ns) return std::nullopt;
  IncidentFinding f;
  ProbeEvidence& p = f.probes;
  p.name = ctx.describe ? ctx.describe(inc) : inc.summary;
  p.bursts = inc.kind == IncidentKind::kFlapping;
  p.bursts_seen = inc.evidence.flaps;
  bool found = false;
  switch (inc.kind) {
    case IncidentKind::kRnicDown:
    case IncidentKind::kRnicLossy:
    case IncidentKind::kFlapping:
    case IncidentKind::kLinkLoss:
    case IncidentKind::kLatencyHotspot:
      found = ComponentFinding(inc, report, ctx, failed_from_start, send_failures, f);
      break;
    case IncidentKind::kSwitch:
      found = SwitchFinding(inc, report, ctx, f);
      break;
    case IncidentKind::kHostProcessing:
      found = ProcessingFinding(inc, report, f);
      break;
  }
  if (!found) return std::nullopt;
  return f;
}

analysis::IncidentDiagnosis ToIncidentDiagnosis(const Diagnosis& d,
                                                const telemetry::NicCounterTotals* nic,
                                                std::int64_t window_start_ns) {
  analysis::IncidentDiagnosis out;
  out.type = std::string(ProblemTypeName(d.type));
  out.rule = d.rule;
  out.evidence = d.evidence;
  out.window_start_ns = window_start_ns;
  if (nic == nullptr) return out;
  for (const auto& [counter, delta] : nic->deltas) {
    if (delta > 0) out.counters.emplace_back(telemetry::CounterName(counter), delta);
  }
  for (const bool received : {true, false}) {
    std::uint64_t pfc = 0;
    for (const auto& p : received ? nic->rx_pfc_pause : nic->tx_pfc_pause) pfc += p.value_or(0);
    if (pfc > 0) out.counters.emplace_back(received ? "rx_pfc_pause" : "tx_pfc_pause", pfc);
  }
  return out;
}

analysis::IncidentDiagnosis Merge(const analysis::IncidentDiagnosis& old,
                                  analysis::IncidentDiagnosis fresh) {
  const bool named_before = !old.rule.empty() && old.type != "unclassified";
  if (named_before && fresh.type == "unclassified") return old;
  return fresh;
}

std::vector<std::string> WindowFindings::Agents() const {
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;
  const auto add = [&](const NicRef& nic) {
    if (!nic.agent_id.empty() && seen.insert(nic.agent_id).second) out.push_back(nic.agent_id);
  };
  for (const RnicFinding& f : window.rnics) add(f.nic);
  for (const LinkFinding& f : window.links) {
    if (f.access_nic) add(*f.access_nic);
  }
  for (const LinkFinding& f : window.links) {
    for (const NicRef& nic : f.rail_nics) add(nic);
  }
  return out;
}

WindowFindings IncidentDiagnoser::Find(const analysis::WindowReport& report,
                                       const std::vector<const analysis::Incident*>& incidents,
                                       const DiagnosisContext& context,
                                       const SendFailures* send_failures) {
  const double tail = Observe(report);
  // One DiagnoseWindow over every finding: RNICs, links (and switches), hosts.
  WindowFindings out;
  WindowEvidence& window = out.window;
  for (const analysis::Incident* inc : incidents) {
    const bool from_start = inc->suspect.kind == Component::Kind::kRnic &&
                            !reached_.contains(RnicKey(inc->suspect.host, inc->suspect.nic));
    std::optional<IncidentFinding> f = FindingOf(*inc, report, context, from_start, send_failures);
    if (!f) continue;
    f->probes.cluster_tail_latency_ratio = tail;
    const Subject subject = f->probes.subject;
    std::size_t index = 0;
    if (subject == Subject::kRnic) {
      index = window.rnics.size();
      window.rnics.push_back({f->nic.value_or(NicRef{}), std::move(f->probes)});
    } else if (subject == Subject::kLink) {
      index = window.links.size();
      window.links.push_back(
          {inc->suspect.link, std::move(f->probes), f->nic, std::move(f->rail_nics)});
    } else {
      index = window.hosts.size();
      window.hosts.push_back({std::string(), std::move(f->probes)});
    }
    out.slots.push_back({inc, subject, index, f->nic});
  }
  return out;
}

double IncidentDiagnoser::Observe(const analysis::WindowReport& report) {
  for (const analysis::RnicStatus& r : report.rnics) {
    if (r.probes_to > r.timeouts_to) reached_.insert(RnicKey(r.host, r.nic));
  }
  const double p99 = report.sla.cluster.latency.p99;
  double ratio = 0;
  if (cluster_p99_.size() >= 3 && p99 > 0) {
    std::vector<double> sorted(cluster_p99_.begin(), cluster_p99_.end());
    const auto mid = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
    std::nth_element(sorted.begin(), mid, sorted.end());
    if (*mid > 0) ratio = p99 / *mid;
  }
  if (report.sla.cluster.latency.count > 0 && p99 > 0) {
    cluster_p99_.push_back(p99);
    if (cluster_p99_.size() > kTailWindows) cluster_p99_.pop_front();
  }
  return ratio;
}

std::vector<std::pair<std::uint64_t, analysis::IncidentDiagnosis>> IncidentDiagnoser::Diagnose(
    const WindowFindings& findings, const TelemetryByNic& telemetry,
    std::int64_t window_start_ns) const {
  const WindowDiagnosis d = DiagnoseWindow(findings.window, telemetry, config_);
  std::vector<std::pair<std::uint64_t, analysis::IncidentDiagnosis>> out;
  for (const WindowFindings::Slot& slot : findings.slots) {
    const Diagnosis& one = slot.subject == Subject::kRnic   ? d.rnics[slot.index]
                           : slot.subject == Subject::kLink ? d.links[slot.index]
                                                            : d.hosts[slot.index];
    const telemetry::NicCounterTotals* nic = nullptr;
    if (slot.nic) {
      const auto it = telemetry.find({slot.nic->agent_id, slot.nic->nic});
      if (it != telemetry.end()) nic = &it->second;
    }
    out.emplace_back(slot.incident->id, Merge(slot.incident->diagnosis,
                                              ToIncidentDiagnosis(one, nic, window_start_ns)));
  }
  return out;
}

std::vector<std::pair<std::uint64_t, analysis::IncidentDiagnosis>> IncidentDiagnoser::Diagnose(
    const analysis::WindowReport& report, const std::vector<const analysis::Incident*>& incidents,
    const TelemetryByNic& telemetry, const DiagnosisContext& context,
    const SendFailures* send_failures) {
  return Diagnose(Find(report, incidents, context, send_failures), telemetry, report.start_ns);
}

}  // namespace hostmesh::analyzer::diagnosis
