#include "sim/diagnosis_score.h"

#include <algorithm>
#include <cstdio>

namespace hostmesh::sim {

std::string_view ExpectedDiagnosis(FaultKind kind) {
  switch (kind) {
    case FaultKind::kLinkFlap:
    case FaultKind::kRnicFlap:
      return "flapping";
    case FaultKind::kRnicLoss:
      return "corruption";
    case FaultKind::kMissingRoute:
    case FaultKind::kRnicDown:  // it cannot send: its send failures say it is down
      return "unreachable_rnic";
    case FaultKind::kBlackhole:
      return "acl";
    case FaultKind::kPfcMisconfig:
      return "pfc_misconfiguration";
    case FaultKind::kEcmpCollision:
      return "ecmp_hash_collision";
    case FaultKind::kHostProcessing:
      return "cpu_overload";
    case FaultKind::kPcieDowngrade:
      return "pcie_downgrade";
    default:
      return "unclassified";
  }
}

void ScoreDiagnosis(const Fleet& fleet, const std::vector<Fault>& faults,
                    const std::vector<IncidentSpan>& incidents, std::int64_t window_ns,
                    DiagnosisScore& score) {
  for (const Fault& f : faults) {
    if (f.kind == FaultKind::kHostLeave || f.kind == FaultKind::kAgentRestart) continue;
    if (f.end_ns - f.start_ns < window_ns) continue;
    DiagnosisRow& row = score[f.kind];
    ++row.faults;
    const FaultTruth truth = TruthOf(fleet, f);
    const std::string expected(ExpectedDiagnosis(f.kind));
    bool any = false, named_expected = false;
    std::string other;  // the first other type named
    for (const IncidentSpan& span : incidents) {
      if (std::find(truth.components.begin(), truth.components.end(), span.key) ==
          truth.components.end()) {
        continue;
      }
      if (span.first_ns >= f.end_ns + 2 * window_ns || span.last_ns <= f.start_ns) continue;
      any = true;
      const std::string type = span.diagnosis.empty() ? "unclassified" : span.diagnosis;
      if (type == expected) {
        named_expected = true;
      } else if (type != "unclassified" && other.empty()) {
        other = type;
      }
    }
    if (!any) continue;
    ++row.with_incident;
    const bool right = other.empty() && (named_expected || expected == "unclassified");
    if (right) {
      ++row.right;
    } else {
      ++row.named_instead[other.empty() ? "unclassified" : other];
    }
  }
}

void PrintDiagnosisScore(std::ostream& out, const DiagnosisScore& score) {
  out << "diagnosis per fault kind (of the faults with an incident on their components)\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-16s %-22s %7s %9s %6s %9s  %s\n", "fault", "expected",
                "faults", "incident", "right", "accuracy", "named instead");
  out << line;
  // The eight types first, then the look-alikes.
  for (const bool eight : {true, false}) {
    for (const auto& [kind, row] : score) {
      if ((ExpectedDiagnosis(kind) != "unclassified") != eight) continue;
      std::string instead;
      for (const auto& [type, n] : row.named_instead) {
        instead += (instead.empty() ? "" : ", ") + type + " " + std::to_string(n);
      }
      std::snprintf(line, sizeof line, "  %-16s %-22s %7llu %9llu %6llu %9.3f  %s\n",
                    std::string(FaultKindName(kind)).c_str(),
                    std::string(ExpectedDiagnosis(kind)).c_str(),
                    static_cast<unsigned long long>(row.faults),
                    static_cast<unsigned long long>(row.with_incident),
                    static_cast<unsigned long long>(row.right), row.accuracy(), instead.c_str());
      out << line;
    }
  }
}

nlohmann::json DiagnosisScoreJson(const DiagnosisScore& score) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [kind, row] : score) {
    out[std::string(FaultKindName(kind))] = {
        {"expected", ExpectedDiagnosis(kind)}, {"faults", row.faults},
        {"with_incident", row.with_incident},  {"right", row.right},
        {"accuracy", row.accuracy()},          {"named_instead", row.named_instead}};
  }
  return out;
}

}  // namespace hostmesh::sim
