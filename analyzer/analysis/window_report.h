#pragma once

// What judging one window yields: plain structs for the store, the HTTP API,
// /metrics and the incident tracker.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/analysis/types.h"

namespace hostmesh::analysis {

struct Quantiles {
  std::uint64_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0;  // ns
};

struct SlaRow {
  std::uint64_t probes = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t rnic_drops = 0;     // timeouts to or from an anomalous RNIC
  std::uint64_t network_drops = 0;  // all other timeouts
  double rnic_drop_rate = 0;        // of probes
  double network_drop_rate = 0;
  Quantiles latency;     // t3 - t2
  Quantiles processing;  // (t4 - t1) - (t3 - t2)
};

struct RailSla {
  int rail = 0;  // of the sending NIC
  SlaRow sla;
};
struct HostSla {
  HostId host = 0;
  SlaRow sla;
};

struct Sla {
  SlaRow cluster;
  std::vector<RailSla> rails;
  std::vector<HostSla> hosts;
};

enum class RnicState : std::uint8_t { kOk, kLossy, kDown };

struct RnicStatus {
  HostId host = 0;
  NicId nic = 0;
  std::uint64_t probes = 0;    // to or from it
  std::uint64_t timeouts = 0;  // to or from it
  std::uint64_t probes_to = 0;
  std::uint64_t timeouts_to = 0;
  // Its own probes it could not send (ProbeRecord::send_failed): in none of
  // the counts above, as they crossed no link. Its sent probes: probes - probes_to.
  std::uint64_t send_failures = 0;
  // Paper rule alone: > threshold of the probes to it timed out (sticky).
  bool paper_anomalous = false;
  // The verdict: blamed by the path-aware inference, or down because it cannot
  // send while probes to it are lost (CannotSend); sticky for rnic_sticky.
  RnicState state = RnicState::kOk;
  bool anomalous = false;
  std::int64_t anomalous_until_ns = 0;  // 0 when never anomalous
  double loss = 0;                      // its own loss estimate when blamed
};

// At least `share` of the RNIC's own probes (sent or not) never left it.
inline bool CannotSend(const RnicStatus& r, double share) {
  const std::uint64_t sent = r.probes - std::min(r.probes, r.probes_to);
  return r.send_failures > 0 && static_cast<double>(r.send_failures) >=
                                    share * static_cast<double>(r.send_failures + sent);
}

// Which way probes cross a link: up is from its lower end (a rail switch) to
// its upper end (a spine). Same-host paths climb from the source's rail switch
// and come down to the destination's, so a link's position tells the way.
enum LinkDirection : std::uint8_t { kBothWays = 0, kUpward = 1, kDownward = 2 };
std::string_view LinkDirectionName(std::uint8_t direction);  // "both", "up", "down"

// A component of a path: a fabric link, or an RNIC (with its NIC link).
struct Component {
  enum class Kind : std::uint8_t { kLink, kRnic } kind = Kind::kLink;
  LinkId link = kUnknown;
  HostId host = 0;
  NicId nic = 0;
  std::uint8_t direction = kBothWays;  // links: the way its failing probes cross it
  friend bool operator==(const Component&, const Component&) = default;
};

// Probes through a link from one source port (an ACL filters 5-tuples).
struct PortOutcome {
  std::uint16_t port = 0;
  std::uint32_t probes = 0;
  std::uint32_t failures = 0;
};

// A component the inference blamed, with its evidence.
struct Suspect {
  Component component;
  std::uint64_t explained = 0;  // failed (or slow) probes it explains
  std::uint64_t failures = 0;   // all failed probes through it
  std::uint64_t good = 0;       // probes through it that were fine
  double loss = 0;
  double z = 0;
  // Raw score in [0, 1] (confidence_calibration.h) and the probability it is
  // right that the calibration maps it to.
  double raw_confidence = 0;
  double confidence = 0;
  std::vector<std::vector<LinkId>> example_paths;  // NIC link to NIC link
  double added_latency_ns = 0;                     // latency hotspots: over the link's own baseline
  // Its failures came in bursts (flap_watch.h): down and up, not lossy.
  bool flapping = false;
  std::uint32_t flaps = 0;  // down episodes in the window once it came back, flapping or not
  double flap_period_s = 0;
  // Flapping links: neighbours whose failures all fell while this one was
  // down (route churn moved their traced flows onto it), not named alone.
  std::vector<LinkId> churn_shadows;
  // A link routing no longer uses (route_watch.h): down and routed around.
  bool routed_around = false;
  // Links: the switches at its ends (kUnknown: a host's end, or not known),
  // so an incident can follow a fault from a link to its switch and back.
  SwitchId lower = kUnknown;
  SwitchId upper = kUnknown;
  // Loss culprit links watched since the previous window: outcomes per source
  // port, by port (diagnosis tells an ACL from a lossy link by them).
  std::vector<PortOutcome> ports;
};

struct LinkRank {
  LinkId link = 0;
  std::uint64_t failures = 0;  // failed probes through it (traced)
  std::uint64_t good = 0;
  double loss = 0;          // failures / (failures + good)
  double score = 0;         // better method: residual failures x residual loss
  std::uint64_t votes = 0;  // paper Algorithm 1
  bool culprit = false;
};

struct SwitchRank {
  SwitchId id = 0;
  std::uint64_t votes = 0;  // paper Algorithm 1
  std::uint32_t culprit_links = 0;
  bool culprit = false;        // the inference blamed the switch itself
  bool routed_around = false;  // down: routing withdrew every up-link into it
  double loss = 0;             // its loss estimate when blamed
  double evidence = 0;         // accumulated evidence (nats) when blamed
  double raw_confidence = 0;   // when blamed: as a Suspect's
  double confidence = 0;
};

struct Localization {
  std::vector<Suspect> culprits;           // the verdict, most evident first
  std::vector<LinkRank> links;             // better method: culprits first, then by score
  std::vector<LinkRank> baseline;          // paper Algorithm 1: by votes
  std::vector<SwitchRank> switches;        // culprits first, then by culprit links, votes
  std::vector<SwitchId> culprit_switches;  // switches the inference blamed themselves
};

struct ProcessingFlag {
  HostId host = 0;
  double p90_ns = 0;
  double fleet_median_p90_ns = 0;
  std::uint64_t samples = 0;
  double raw_confidence = 0;  // min(1, p90 / fleet median / (2 x proc_factor))
  double confidence = 0;
  // Flagged on the agent's word: it shed load for CPU pressure in the window
  // (a direct sign of overload that the proc_factor bar stands in for), and
  // its p90 is above the fleet's median by proc_min_excess.
  bool shedding = false;
};

struct Coverage {
  std::vector<LinkId> crossed;  // by at least one traced probe
  // Seen as avoided by routing (route_avoided_alpha), sorted: what seems to
  // cross them is on paths traced before routing moved it. Switches: every
  // watched up-link into it avoided (two or more).
  std::vector<LinkId> avoided;
  std::vector<SwitchId> avoided_switches;
  std::vector<LinkId> never_crossed;  // of all links the fabric map knows
  // Latency: links not hot but still at least half the hotspot bar over
  // their baseline (sorted): not clean for a latency incident on them.
  std::vector<LinkId> slow;
  double fraction = 0;
  std::uint64_t traced_probes = 0;
  std::uint64_t untraced_probes = 0;
};

// A host whose agent shed load (self-protection) during the window: it
// probed at a fraction of its configured rate by its own choice, so fewer
// probes from it are neither loss nor a coverage hole.
struct SheddingHost {
  HostId host = 0;
  double rate_fraction = 1;    // at the window's end
  double lowest_fraction = 1;  // the lowest in the window
  std::int64_t since_ns = 0;   // the agent's clock, its last step change
  std::string cause;           // the agent's words for the signal that set the step
  bool cpu = false;            // a CPU signal set a step in the window (not memory)
};

struct WindowReport {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t results = 0;
  std::vector<HostId> present_hosts;
  std::vector<HostId> absent_hosts;  // reported before, silent in this window
  std::vector<RnicStatus> rnics;
  Sla sla;
  Localization loss;              // timeouts
  double background_loss = 0;     // ambient path loss the loss inference judged against
  double evidence_threshold = 0;  // nats of evidence that make a culprit (sequential_inference.h)
  Localization latency;           // slow probes (latency hotspots)
  std::int64_t slow_threshold_ns = 0;
  std::vector<ProcessingFlag> processing_flags;
  Coverage coverage;
  std::vector<SheddingHost> shedding;  // present hosts shedding load, by host id
};

}  // namespace hostmesh::analysis
