#pragma once

// Names the paper's problem types by reading probe evidence and NIC counters
// together. Pure: the caller gives what the probes said about one suspect in
// a window (or over an incident's windows) and the counter deltas of the NICs
// involved over the same time; Diagnose returns the type, the rule that chose
// it and a sentence of evidence for the on-call engineer.
//
// The rules, first match wins ("Diagnosis" in docs/analyzer.md lists them too):
//   flapping             loss, and the probes' own flap watch found the failures
//                        in bursts (a flapping incident), or link_downed, carrier
//                        changes or PHY link-down events rose on the NIC and the
//                        link went down and came back (a down and the port up at
//                        the end, two downs, or two carrier changes): a link that
//                        went down once and stayed down is down, and one that only
//                        came back recovered; neither is flapping
//   corruption           loss, and symbol, FCS or receive errors rose on the NIC
//   pcie_downgrade       the NIC's PCIe link runs below its maximum width or speed
//                        and the NIC sent pause frames
//   unreachable_rnic     the RNIC could not send most of its own probes (send
//                        failures: its port or QP is down) while probes to it
//                        were lost: the RNIC is down; or every probe to it
//                        failed since it first appeared, its port is up and no
//                        error counter moved (a missing route or address)
//   acl                  the loss is confined to some source ports (5-tuples):
//                        they lose (nearly) all their probes, the others none
//   pfc_misconfiguration a link drops while congested (latency over its own
//                        baseline) and the NICs of its rail received no pause frames
//   ecmp_hash_collision  a latency hotspot on one rail uplink while the other
//                        uplinks of that rail switch are not hot, without loss,
//                        and the NICs of its rail received pause frames (the
//                        queue is traffic's: without pause it is a delay)
//   cpu_overload         end-host processing delay up while the host's network
//                        latency and loss are normal
//   unclassified         none of the above (loss with no counter movement stays
//                        plain link or RNIC loss)

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/telemetry/nic_counter_totals.h"

namespace hostmesh::analyzer::diagnosis {

enum class ProblemType : std::uint8_t {
  kUnclassified,
  kFlapping,
  kCorruption,
  kPcieDowngrade,
  kUnreachableRnic,
  kAcl,
  kPfcMisconfiguration,
  kEcmpHashCollision,
  kCpuOverload,
};
std::string_view ProblemTypeName(ProblemType type);  // "flapping", ...

enum class Subject : std::uint8_t { kRnic, kLink, kHost };
enum class Symptom : std::uint8_t { kLoss, kLatency, kProcessingDelay };

// The probes through one source port of the suspect.
struct PortOutcome {
  std::uint16_t port = 0;
  std::uint64_t probes = 0;
  std::uint64_t failures = 0;
};

// What the probes say about the suspect (a WindowReport's RNIC status, culprit
// link, latency hotspot or processing flag, reduced to what the rules read).
struct ProbeEvidence {
  Subject subject = Subject::kRnic;
  Symptom symptom = Symptom::kLoss;
  std::string name;            // for the sentence: "RNIC h003 nic1", "link p0r0-s01", "host h003"
  std::uint64_t probes = 0;    // to or through the suspect
  std::uint64_t failures = 0;  // of them, lost
  // Every probe to the RNIC failed since it first appeared (none ever arrived).
  bool failed_from_start = false;
  // RNIC subjects: probes the RNIC itself could not send (ProbeResult.send_failed:
  // its port down, a QP in error) and those it did send. Not in probes or
  // failures: they crossed no link, so they are no network loss.
  std::uint64_t send_failures = 0;
  std::uint64_t sent = 0;
  // The analysis' flap watch (analysis/flap_watch.h) found the failures in
  // bursts: the incident is a flapping one. Down episodes seen, 0 unknown.
  bool bursts = false;
  std::uint64_t bursts_seen = 0;
  // Per source port through the suspect (loss confined to 5-tuples); may be empty.
  std::vector<PortOutcome> ports;
  // Latency of the suspect's probes over its own baseline (p99 / baseline p99); 0 unknown.
  double latency_ratio = 0;
  // Latency hotspots on a link: whether it is a rail-to-spine uplink, how many
  // other uplinks its rail switch has and how many of those are hot too.
  bool rail_uplink = false;
  std::uint32_t sibling_uplinks = 0;
  std::uint32_t sibling_uplinks_hot = 0;
  // Cluster-wide p99 latency over its baseline (the median of recent windows'); 0
  // unknown. Evidence only: a PCIe downgrade's pause frames slow the fabric.
  double cluster_tail_latency_ratio = 0;
  // Host subjects: processing delay over the fleet's (p90 / fleet median p90),
  // and whether the host's probes see normal network loss and latency.
  double processing_ratio = 0;
  bool network_fine = false;

  double loss() const {
    return probes == 0 ? 0 : static_cast<double>(failures) / static_cast<double>(probes);
  }
};

// The counter deltas over the same time.
struct TelemetryEvidence {
  // The suspect RNIC's (or a NIC access link's NIC); null when it did not report.
  const telemetry::NicCounterTotals* nic = nullptr;
  // Link subjects: pause frames received by the NICs of the link's rail (of its
  // lower switch); nullopt unknown.
  std::optional<std::uint64_t> rail_pause_received;
};

struct DiagnosisConfig {
  // acl: a port is blocked at or above this loss, clean at or below the other,
  // counted only with at least this many probes.
  double acl_blocked_loss = 0.9;
  double acl_clean_loss = 0.01;
  std::uint64_t acl_min_port_probes = 5;
  // Latency over a link's own baseline that counts as congestion / a hotspot.
  double congested_latency_ratio = 2.0;
  // cpu_overload: processing delay over the fleet's.
  double processing_ratio = 2.0;
  // unreachable_rnic (down): the share of the RNIC's own probes it could not
  // send. Most, not any: a QP reset fails a few sends of a working RNIC.
  double down_send_failure_share = 0.5;
};

struct Diagnosis {
  ProblemType type = ProblemType::kUnclassified;
  std::string rule;      // the rule that chose it, as listed above
  std::string evidence;  // "RNIC h003 nic1 losing 2.1% of probes; symbol errors +4,210 ..."
};

Diagnosis Diagnose(const ProbeEvidence& probes, const TelemetryEvidence& telemetry,
                   const DiagnosisConfig& config = {});

// "4,210": counts in evidence sentences.
std::string GroupThousands(std::uint64_t value);

}  // namespace hostmesh::analyzer::diagnosis
