#include "analyzer/evidence/window_verdict.h"

#include <algorithm>

namespace hostmesh::analyzer::evidence {

namespace {

using analysis::Component;
using analysis::IncidentKind;

bool SameComponent(const Component& a, const Component& b) {
  if (a.kind != b.kind) return false;
  return a.kind == Component::Kind::kLink ? a.link == b.link : a.host == b.host && a.nic == b.nic;
}

bool IsLatency(IncidentKind kind) {
  return kind == IncidentKind::kLatencyHotspot;
}

void AddRivals(const analysis::Localization& l, const analysis::Incident& incident,
               v1::evidence::WindowVerdict& out) {
  const bool link =
      incident.kind != IncidentKind::kSwitch && incident.suspect.kind == Component::Kind::kLink;
  std::size_t links = 0;
  for (const analysis::LinkRank& r : l.links) {
    if (links == kRivalLinks) break;
    if (link && r.link == incident.suspect.link) continue;
    if (r.failures == 0) break;  // ranked by evidence: the rest explain nothing
    v1::evidence::Rival& rival = *out.add_rivals();
    rival.set_kind("link");
    rival.set_id(r.link);
    rival.set_failures(r.failures);
    rival.set_good(r.good);
    rival.set_loss(r.loss);
    rival.set_score(r.score);
    rival.set_votes(r.votes);
    rival.set_culprit(r.culprit);
    ++links;
  }
  std::size_t switches = 0;
  for (const analysis::SwitchRank& r : l.switches) {
    if (switches == kRivalSwitches) break;
    if (incident.kind == IncidentKind::kSwitch && r.id == incident.suspect.link) continue;
    if (r.votes == 0 && !r.culprit) break;
    v1::evidence::Rival& rival = *out.add_rivals();
    rival.set_kind("switch");
    rival.set_id(r.id);
    rival.set_loss(r.loss);
    rival.set_score(r.evidence);
    rival.set_votes(r.votes);
    rival.set_culprit(r.culprit);
    ++switches;
  }
}

}  // namespace

v1::evidence::WindowVerdict VerdictOf(const analysis::Incident& incident,
                                      const analysis::WindowReport& report) {
  v1::evidence::WindowVerdict out;
  out.set_start_ns(report.start_ns);
  out.set_end_ns(report.end_ns);
  out.set_confidence(incident.confidence);
  out.set_background_loss(report.background_loss);
  const analysis::Localization& l = IsLatency(incident.kind) ? report.latency : report.loss;
  if (incident.kind == IncidentKind::kSwitch) {
    for (const analysis::SwitchRank& r : l.switches) {
      if (r.id != incident.suspect.link) continue;
      out.set_loss(r.loss);
      out.set_votes(r.votes);
    }
  } else if (incident.kind == IncidentKind::kHostProcessing) {
    for (const analysis::ProcessingFlag& f : report.processing_flags) {
      if (f.host != incident.suspect.host) continue;
      out.set_loss(f.p90_ns);  // the delay that flagged it
      out.set_good(f.samples);
    }
  } else {
    for (const analysis::Suspect& s : l.culprits) {
      if (!SameComponent(s.component, incident.suspect)) continue;
      out.set_loss(IsLatency(incident.kind) ? s.added_latency_ns : s.loss);
      out.set_failures(s.failures);
      out.set_good(s.good);
    }
    for (const analysis::LinkRank& r : l.links) {
      if (incident.suspect.kind == Component::Kind::kLink && r.link == incident.suspect.link) {
        out.set_votes(r.votes);
      }
    }
    if (incident.suspect.kind == Component::Kind::kRnic && out.failures() == 0) {
      // Down RNICs are told by their probes, not by the inference.
      for (const analysis::RnicStatus& r : report.rnics) {
        if (r.host != incident.suspect.host || r.nic != incident.suspect.nic) continue;
        out.set_loss(r.loss);
        out.set_failures(r.timeouts);
        out.set_good(r.probes - std::min(r.probes, r.timeouts));
      }
    }
  }
  out.set_diagnosis(incident.diagnosis.type);
  out.set_rule(incident.diagnosis.rule);
  out.set_diagnosis_text(incident.diagnosis.evidence);
  AddRivals(l, incident, out);
  return out;
}

}  // namespace hostmesh::analyzer::evidence
