#pragma once

// Incidents: one per fault, not one per window. A finding of a window (a blamed
// link, RNIC or switch, a latency hotspot, an overloaded host) opens an
// incident for its (category, suspect) or updates the open one; the incident
// resolves after its suspect was observed healthy for a few windows. An RNIC
// that goes from lossy to down stays one incident whose kind follows it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/analysis/config.h"
#include "analyzer/analysis/window_report.h"

namespace hostmesh::analysis {

enum class IncidentKind : std::uint8_t {
  kRnicDown,
  kRnicLossy,
  kLinkLoss,
  kSwitch,
  kLatencyHotspot,
  kHostProcessing,
  kFlapping,  // a link or RNIC going down and up (suspect says which)
};
std::string_view IncidentKindName(IncidentKind kind);  // "rnic_down", ...
std::optional<IncidentKind> IncidentKindFromName(std::string_view name);

struct IncidentEvidence {
  std::uint64_t failures = 0;    // failed (or slow) probes explained, summed over windows
  std::uint64_t good = 0;        // fine probes through the suspect, summed
  std::uint64_t votes = 0;       // paper Algorithm 1 votes, summed (links, switches)
  double loss = 0;               // last window's estimate
  std::uint8_t directions = 0;   // links: kUpward | kDownward seen failing
  std::uint64_t flaps = 0;       // down episodes seen, summed over windows
  double flap_period_s = 0;      // last estimate
  bool routed_around = false;    // down and routed around (last window): a link or a switch
  double processing_p90_ns = 0;  // host processing delay: last window
  double fleet_median_p90_ns = 0;
  std::vector<std::vector<LinkId>> example_paths;
  std::vector<LinkId> links;        // a switch's blamed links
  std::vector<LinkId> churn_links;  // flapping links: neighbours its route churn made fail
  std::int64_t first_seen_ns = 0;   // start of the first window it was found in
  std::int64_t last_seen_ns = 0;    // end of the last window it was found in
  int windows = 0;                  // windows it was found in
};

// What diagnosis (analyzer/diagnosis) named the incident, reading its probe
// evidence beside the NIC counters of the same windows. Set by the analyzer,
// not by the tracker: the analysis knows no counters.
struct IncidentDiagnosis {
  std::string type = "unclassified";  // diagnosis::ProblemTypeName
  std::string rule;                   // the rule that chose it; empty: never diagnosed
  std::string evidence;               // the sentence for the on-call engineer
  // The counters that moved on the NIC read, by name (telemetry::CounterName).
  std::vector<std::pair<std::string, std::uint64_t>> counters;
  std::int64_t window_start_ns = 0;  // the window diagnosed last
};

struct Incident {
  std::uint64_t id = 0;  // 1, 2, ... in opening order
  IncidentKind kind = IncidentKind::kLinkLoss;
  Component suspect;      // link or RNIC; for a switch: link = switch id; host: host
  std::string summary;    // "link 12", "host 3 nic 1", "switch 4", "host 3"
  double confidence = 0;  // last window's, in [0, 1]
  IncidentEvidence evidence;
  IncidentDiagnosis diagnosis;
  bool open = true;
  std::int64_t resolved_ns = 0;
  // Resolved because it was one fault with this incident, which goes on
  // (a down switch's links); 0 otherwise.
  std::uint64_t merged_into = 0;
  int clean_windows = 0;       // consecutive, observed and healthy
  int unobserved_windows = 0;  // consecutive, no probe crossed the suspect
  // Links: the switches at its ends, as the last window naming it said (not
  // stored: after a restart, known again once a window names it).
  SwitchId lower = kUnknown;
  SwitchId upper = kUnknown;
};

class IncidentTracker {
 public:
  explicit IncidentTracker(AnalysisConfig config = {}) : config_(config) {}

  // Folds one judged window in; returns the ids of incidents opened, updated or
  // resolved by it.
  std::vector<std::uint64_t> Update(const WindowReport& report);

  const std::vector<Incident>& all() const { return incidents_; }
  std::vector<const Incident*> open() const;
  const Incident* Find(std::uint64_t id) const;
  // Attaches the diagnosis of incident `id`; false when there is none such.
  bool SetDiagnosis(std::uint64_t id, IncidentDiagnosis diagnosis);

  // After a restart: the incidents as stored (open ones are updated and
  // resolved as if never interrupted); new incidents get ids above every id
  // in `incidents` and `next_id`.
  void Restore(std::vector<Incident> incidents, std::uint64_t next_id);
  // Forgets resolved incidents resolved before `before_ns` (the store keeps them).
  void Prune(std::int64_t before_ns);

 private:
  enum class Category : std::uint8_t { kRnic, kLink, kSwitch, kLatencyLink, kLatencyRnic, kHost };
  static std::pair<Category, std::uint64_t> KeyOf(const Incident& incident);
  struct Finding {
    Category category;
    std::uint64_t key;
    IncidentKind kind;
    Component suspect;
    double confidence;
    const Suspect* evidence;  // nullptr for switches and hosts
  };
  static std::uint64_t IndexKey(Category category, std::uint64_t key) {
    return (std::uint64_t{static_cast<std::uint8_t>(category)} << 56) | key;
  }
  Incident* FindOpen(Category category, std::uint64_t key);
  // Latency findings without an open incident: consecutive windows found in
  // (hotspot_open_windows); true while this one must wait for more.
  struct Streak {
    int windows = 0;
    std::int64_t first_start_ns = 0;
  };
  bool HoldBack(const Finding& f, const Streak& streak) const;
  // The phases of Update, in order.
  std::vector<Finding> FindingsOf(const WindowReport& report) const;
  void CountLatencyStreaks(const std::vector<Finding>& findings, std::int64_t start_ns);
  Incident* IncidentFor(const Finding& f, const std::vector<std::uint64_t>& named,
                        std::int64_t start_ns, std::vector<char>& seen);
  void Record(const Finding& f, const WindowReport& report, Incident& incident) const;
  void ResolveQuiet(const WindowReport& report, const std::vector<char>& seen,
                    std::vector<std::uint64_t>& touched);

  // One fault, one incident: a switch named where one of its links was (or
  // the other way round), while that one is not named in the same window, is
  // the same fault better explained; its open incident is moved onto the new
  // suspect. `named`: this window's findings (IndexKeys), sorted.
  Incident* Adopt(const Finding& f, const std::vector<std::uint64_t>& named);
  // Resolves the other open incidents Adopt would have moved onto `kept` (a
  // switch's links, each opened on its own before the switch was named) as
  // merged into it; their ids are appended to `touched`.
  void MergeSameFault(const Incident& kept, const Finding& f,
                      const std::vector<std::uint64_t>& named, std::int64_t end_ns,
                      std::vector<std::uint64_t>& touched);
  // Adopt's test: incident i is the same fault as finding f, seen as the
  // other of a link and its switch.
  bool SameFault(std::size_t i, const Finding& f, const std::vector<std::uint64_t>& named) const;
  void RebuildIndex();
  // observed_rnics: the window's RNICs with probes (RnicKey), sorted; built on
  // first need, so a window costs O(RNICs) once, not per open incident.
  bool Observed(const Incident& incident, Category category, const WindowReport& report,
                std::vector<std::uint64_t>& observed_rnics) const;

  AnalysisConfig config_;
  std::vector<Incident> incidents_;
  std::vector<std::pair<Category, std::uint64_t>> keys_;  // parallel to incidents_
  // The open incident of each (category, key): lookups stay O(1) however many
  // incidents a bad day leaves open or recently resolved.
  std::unordered_map<std::uint64_t, std::size_t> open_index_;  // IndexKey -> position
  // Not stored: after a restart a hotspot not yet an incident starts over.
  std::unordered_map<std::uint64_t, Streak> latency_streaks_;  // IndexKey -> streak
  std::uint64_t next_id_ = 1;
};

}  // namespace hostmesh::analysis
