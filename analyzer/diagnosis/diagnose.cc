#include "analyzer/diagnosis/diagnose.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <utility>

namespace hostmesh::analyzer::diagnosis {
namespace {

struct Named {
  v1::NicCounter counter;
  const char* label;
};

constexpr std::array<Named, 3> kFlapCounters = {{
    {v1::NIC_COUNTER_LINK_DOWNED, "link_downed"},
    {v1::NIC_COUNTER_CARRIER_CHANGES, "carrier changes"},
    {v1::NIC_COUNTER_LINK_DOWN_EVENTS, "PHY link-down events"},
}};
constexpr std::array<Named, 4> kCorruptionCounters = {{
    {v1::NIC_COUNTER_SYMBOL_ERROR, "symbol errors"},
    {v1::NIC_COUNTER_RX_SYMBOL_ERRORS, "PCS symbol errors"},
    {v1::NIC_COUNTER_RX_FCS_ERRORS, "FCS errors"},
    {v1::NIC_COUNTER_PORT_RCV_ERRORS, "receive errors"},
}};

constexpr std::uint32_t kPortActive = 4;  // sysfs state "4: ACTIVE"

std::string Fixed(double value, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

// "symbol errors +4,210 and FCS errors +3,980"; empty when none moved.
template <std::size_t N>
std::string Moved(const telemetry::NicCounterTotals* nic, const std::array<Named, N>& counters) {
  if (nic == nullptr) return {};
  std::vector<std::string> parts;
  for (const Named& n : counters) {
    const auto delta = nic->Get(n.counter);
    if (delta && *delta > 0) parts.push_back(std::string(n.label) + " +" + GroupThousands(*delta));
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

// What the probes saw, as the sentence's start.
std::string Observed(const ProbeEvidence& p) {
  switch (p.symptom) {
    case Symptom::kLoss:
      return p.name + " losing " + Fixed(p.loss() * 100, 1) + "% of probes";
    case Symptom::kLatency:
      return p.name + " latency " + Fixed(p.latency_ratio, 1) + "x its baseline";
    case Symptom::kProcessingDelay:
      return p.name + " processing delay " + Fixed(p.processing_ratio, 1) + "x the fleet's";
  }
  return p.name;
}

Diagnosis Make(ProblemType type, std::string rule, std::string evidence) {
  return {type, std::move(rule), std::move(evidence)};
}

bool PortUp(const telemetry::NicCounterTotals& nic) {
  if (nic.port_state != 0) return nic.port_state == kPortActive;
  return nic.carrier == v1::CARRIER_UP;  // UDP NICs: no RDMA port, the netdev tells
}

// The link went down and came back within the counters' time: a down (one
// link_downed or PHY event) and the port up at the end, or two downs, or a
// down and its return (two carrier changes). A lone return is a recovery.
bool Bounced(const telemetry::NicCounterTotals& nic) {
  const auto delta = [&](v1::NicCounter counter) { return nic.Get(counter).value_or(0); };
  const std::uint64_t downs =
      std::max(delta(v1::NIC_COUNTER_LINK_DOWNED), delta(v1::NIC_COUNTER_LINK_DOWN_EVENTS));
  return (downs >= 1 && PortUp(nic)) || downs >= 2 || delta(v1::NIC_COUNTER_CARRIER_CHANGES) >= 2;
}

std::string Speed(std::uint32_t mts) {
  return Fixed(mts / 1000.0, mts % 1000 == 0 ? 0 : 1) + " GT/s";
}

// Source ports that lose (nearly) all their probes while the others lose
// (nearly) none; nullopt when the loss is not confined that way.
struct Confinement {
  std::size_t blocked = 0;
  std::size_t counted = 0;
};
std::optional<Confinement> ConfinedToPorts(const ProbeEvidence& p, const DiagnosisConfig& c) {
  Confinement out;
  std::size_t clean = 0;
  for (const PortOutcome& port : p.ports) {
    if (port.probes < c.acl_min_port_probes) continue;
    ++out.counted;
    const double loss = static_cast<double>(port.failures) / static_cast<double>(port.probes);
    if (loss >= c.acl_blocked_loss) {
      ++out.blocked;
    } else if (loss <= c.acl_clean_loss) {
      ++clean;
    } else {
      return std::nullopt;  // a port losing some of its probes: not a filter
    }
  }
  if (out.blocked == 0 || clean == 0) return std::nullopt;
  return out;
}

// Most of the RNIC's own probes never left it: a local fault, not the network.
bool CannotSend(const ProbeEvidence& p, const DiagnosisConfig& c) {
  const std::uint64_t own = p.send_failures + p.sent;
  return p.send_failures > 0 && static_cast<double>(p.send_failures) >=
                                    c.down_send_failure_share * static_cast<double>(own);
}

}  // namespace

std::string_view ProblemTypeName(ProblemType type) {
  switch (type) {
    case ProblemType::kUnclassified:
      return "unclassified";
    case ProblemType::kFlapping:
      return "flapping";
    case ProblemType::kCorruption:
      return "corruption";
    case ProblemType::kPcieDowngrade:
      return "pcie_downgrade";
    case ProblemType::kUnreachableRnic:
      return "unreachable_rnic";
    case ProblemType::kAcl:
      return "acl";
    case ProblemType::kPfcMisconfiguration:
      return "pfc_misconfiguration";
    case ProblemType::kEcmpHashCollision:
      return "ecmp_hash_collision";
    case ProblemType::kCpuOverload:
      return "cpu_overload";
  }
  return "unclassified";
}

std::string GroupThousands(std::uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

namespace {

// "x8 of x16 at 16 GT/s of 16 GT/s".
std::string PcieLinkText(const telemetry::PcieLinkState& link) {
  return "x" + std::to_string(link.current_width) + " of x" + std::to_string(link.max_width) +
         " at " + Speed(link.current_speed_mts) + " of " + Speed(link.max_speed_mts);
}

// What every rule reads: the probe and telemetry evidence, and what is
// derived from them once (loss seen, the counters that moved).
struct RuleInput {
  const ProbeEvidence& p;
  const TelemetryEvidence& t;
  const DiagnosisConfig& c;
  const telemetry::NicCounterTotals* nic;
  bool loss;
  std::string flaps;   // flap counters that moved (Moved)
  std::string errors;  // corruption counters that moved
};

std::optional<Diagnosis> RuleFlapping(const RuleInput& in) {
  const ProbeEvidence& p = in.p;
  const telemetry::NicCounterTotals* nic = in.nic;
  const bool loss = in.loss;
  const std::string& flaps = in.flaps;
  const bool bounced = !flaps.empty() && Bounced(*nic);
  if (loss && (p.bursts || bounced)) {
    std::string seen;
    if (p.bursts) {
      seen = p.bursts_seen > 0 ? "probes lost in " + std::to_string(p.bursts_seen) + " bursts"
                               : "probes lost in bursts";
    }
    if (bounced) seen += (seen.empty() ? "" : ", ") + flaps;
    return Make(ProblemType::kFlapping,
                "flapping: probes lost in bursts, or link_downed, carrier changes or PHY "
                "link-down events rose with probe loss and the link came back",
                Observed(p) + "; " + seen +
                    " in the window: the link or RNIC is flapping (check the cable, optic and "
                    "switch port)");
  }
  return std::nullopt;
}

std::optional<Diagnosis> RuleCorruption(const RuleInput& in) {
  const ProbeEvidence& p = in.p;
  const bool loss = in.loss;
  const std::string& errors = in.errors;
  if (loss && !errors.empty()) {
    return Make(ProblemType::kCorruption,
                "corruption: symbol, FCS or receive errors rose with probe loss",
                Observed(p) + "; " + errors + " in the window: likely a dirty optic or bad cable");
  }
  return std::nullopt;
}

std::optional<Diagnosis> RulePcieDowngrade(const RuleInput& in) {
  const ProbeEvidence& p = in.p;
  const telemetry::NicCounterTotals* nic = in.nic;
  if (nic != nullptr && nic->pcie && nic->pcie->Downgraded()) {
    const auto sent = nic->PauseFrames(false);
    if (sent && *sent > 0) {
      const telemetry::PcieLinkState& link = *nic->pcie;
      std::string evidence = Observed(p) + "; PCIe link " + PcieLinkText(link) +
                             ", pause frames sent +" + GroupThousands(*sent);
      if (p.cluster_tail_latency_ratio >= 1.1) {  // "1.0x" would say nothing
        evidence += ", cluster tail latency " + Fixed(p.cluster_tail_latency_ratio, 1) + "x";
      }
      evidence +=
          ": the NIC cannot drain into host memory and pauses the fabric (reseat the card, "
          "check the slot)";
      return Make(ProblemType::kPcieDowngrade,
                  "pcie_downgrade: the NIC's PCIe link runs below its maximum width or speed and "
                  "the NIC sent pause frames",
                  std::move(evidence));
    }
  }
  return std::nullopt;
}

std::optional<Diagnosis> RuleCannotSend(const RuleInput& in) {
  const ProbeEvidence& p = in.p;
  const DiagnosisConfig& c = in.c;
  const telemetry::NicCounterTotals* nic = in.nic;
  const bool loss = in.loss;
  const std::string& flaps = in.flaps;
  if (loss && p.subject == Subject::kRnic && CannotSend(p, c)) {
    std::string evidence = Observed(p) + "; it could not send " + GroupThousands(p.send_failures) +
                           " of its " + GroupThousands(p.send_failures + p.sent) + " own probes";
    if (nic == nullptr) {
      evidence += " (no NIC counters reported)";
    } else if (!PortUp(*nic)) {
      evidence += " and its port is down" + (flaps.empty() ? std::string() : " (" + flaps + ")");
    } else {
      evidence += " with its port up";
    }
    evidence += ": the RNIC is down (check the NIC, its cable and its driver)";
    return Make(ProblemType::kUnreachableRnic,
                "unreachable_rnic: the RNIC could not send most of its own probes (send "
                "failures) while probes to it were lost: it is down",
                std::move(evidence));
  }
  return std::nullopt;
}

std::optional<Diagnosis> RuleSilentSinceStart(const RuleInput& in) {
  const ProbeEvidence& p = in.p;
  const telemetry::NicCounterTotals* nic = in.nic;
  const bool loss = in.loss;
  if (loss && p.subject == Subject::kRnic && p.failed_from_start && p.failures == p.probes &&
      nic != nullptr && PortUp(*nic)) {
    return Make(ProblemType::kUnreachableRnic,
                "unreachable_rnic: every probe to the RNIC failed since it first appeared, its "
                "port is up and no error counter moved",
                Observed(p) +
                    " since it first appeared with its port up and clean counters: "
                    "likely a missing route or address for the RNIC");
  }
  return std::nullopt;
}

std::optional<Diagnosis> RuleAcl(const RuleInput& in) {
  const ProbeEvidence& p = in.p;
  const DiagnosisConfig& c = in.c;
  const bool loss = in.loss;
  if (loss) {
    if (const auto confined = ConfinedToPorts(p, c)) {
      return Make(ProblemType::kAcl,
                  "acl: the loss is confined to some source ports (5-tuples), which lose nearly "
                  "all their probes while the others lose none",
                  Observed(p) + "; " + std::to_string(confined->blocked) + " of " +
                      std::to_string(confined->counted) +
                      " source ports lose every probe, the others none: likely a switch ACL "
                      "dropping those 5-tuples");
    }
  }
  return std::nullopt;
}

std::optional<Diagnosis> RulePfcMisconfiguration(const RuleInput& in) {
  const ProbeEvidence& p = in.p;
  const TelemetryEvidence& t = in.t;
  const DiagnosisConfig& c = in.c;
  const bool loss = in.loss;
  if (loss && p.subject == Subject::kLink && p.latency_ratio >= c.congested_latency_ratio &&
      t.rail_pause_received && *t.rail_pause_received == 0) {
    return Make(ProblemType::kPfcMisconfiguration,
                "pfc_misconfiguration: a link drops while congested and the NICs of its rail "
                "received no pause frames",
                Observed(p) + " while congested (latency " + Fixed(p.latency_ratio, 1) +
                    "x its baseline) and no pause frames reached the rail's NICs: the switch "
                    "drops instead of pausing (check its PFC configuration)");
  }
  return std::nullopt;
}

std::optional<Diagnosis> RuleEcmpCollision(const RuleInput& in) {
  const ProbeEvidence& p = in.p;
  const TelemetryEvidence& t = in.t;
  const DiagnosisConfig& c = in.c;
  // Congestion by traffic in a lossless fabric pauses the senders below the
  // queue: without pause frames on the rail a slow uplink is a delay, not flows.
  if (p.subject == Subject::kLink && p.symptom == Symptom::kLatency &&
      p.latency_ratio >= c.congested_latency_ratio && p.rail_uplink && p.sibling_uplinks > 0 &&
      p.sibling_uplinks_hot == 0 && p.failures == 0 && t.rail_pause_received &&
      *t.rail_pause_received > 0) {
    return Make(ProblemType::kEcmpHashCollision,
                "ecmp_hash_collision: a latency hotspot on one rail uplink while the other "
                "uplinks of that rail switch are not hot, without loss, and the NICs of its "
                "rail received pause frames",
                Observed(p) + " while its " + std::to_string(p.sibling_uplinks) +
                    " sibling uplinks are not, and the rail's NICs received " +
                    GroupThousands(*t.rail_pause_received) +
                    " pause frames: likely an ECMP hash collision of large flows");
  }
  return std::nullopt;
}

std::optional<Diagnosis> RuleCpuOverload(const RuleInput& in) {
  const ProbeEvidence& p = in.p;
  const DiagnosisConfig& c = in.c;
  if (p.subject == Subject::kHost && p.symptom == Symptom::kProcessingDelay &&
      p.processing_ratio >= c.processing_ratio && p.network_fine) {
    return Make(ProblemType::kCpuOverload,
                "cpu_overload: end-host processing delay up while the host's network latency "
                "and loss are normal",
                Observed(p) +
                    " with network latency and loss normal: the host's CPU is "
                    "overloaded");
  }
  return std::nullopt;
}

Diagnosis Unclassified(const RuleInput& in) {
  const ProbeEvidence& p = in.p;
  const telemetry::NicCounterTotals* nic = in.nic;
  const bool loss = in.loss;
  const std::string& flaps = in.flaps;
  std::string evidence = Observed(p);
  if (loss && nic != nullptr && !PortUp(*nic)) {
    evidence += "; its port is down" + (flaps.empty() ? std::string() : " (" + flaps + ")");
  } else if (loss) {
    evidence += nic == nullptr ? "; no NIC counters reported" : "; no NIC counter moved";
  }
  return Make(ProblemType::kUnclassified, "unclassified: no rule matched", std::move(evidence));
}

// The rules in the order they are tried: the first that matches names the
// problem type; none matching leaves it unclassified.
constexpr std::optional<Diagnosis> (*kRules[])(const RuleInput&) = {
    RuleFlapping, RuleCorruption,          RulePcieDowngrade, RuleCannotSend,  RuleSilentSinceStart,
    RuleAcl,      RulePfcMisconfiguration, RuleEcmpCollision, RuleCpuOverload,
};

Diagnosis ByRules(const ProbeEvidence& p, const TelemetryEvidence& t, const DiagnosisConfig& c) {
  const RuleInput in{p,
                     t,
                     c,
                     t.nic,
                     p.symptom == Symptom::kLoss && p.failures > 0,
                     Moved(t.nic, kFlapCounters),
                     Moved(t.nic, kCorruptionCounters)};
  for (const auto rule : kRules) {
    if (std::optional<Diagnosis> d = rule(in)) return std::move(*d);
  }
  return Unclassified(in);
}

}  // namespace

Diagnosis Diagnose(const ProbeEvidence& p, const TelemetryEvidence& t, const DiagnosisConfig& c) {
  Diagnosis d = ByRules(p, t, c);
  // A PCIe link below its maximum is worth knowing whatever the type.
  if (d.type != ProblemType::kPcieDowngrade && t.nic != nullptr && t.nic->pcie &&
      t.nic->pcie->Downgraded()) {
    d.evidence += "; its PCIe link runs " + PcieLinkText(*t.nic->pcie);
  }
  return d;
}

}  // namespace hostmesh::analyzer::diagnosis
