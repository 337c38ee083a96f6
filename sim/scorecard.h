#pragma once

// Ground truth against verdicts, window by window, and the scorecard.
//
// Truth of a window: the components of the faults active for at least half of
// it. A fault active for less than half a window makes its components "don't
// care" there (neither right nor wrong to name), and so are the links of a
// faulty switch (naming the switch is what counts). Background loss, hosts
// leaving and agents restarting are not faults to localize: naming anything
// for them is a false positive.
//
// Metrics per method, summed over the windows of a run:
//  precision, recall, F1   of the named set against the truth set
//  top-1                   windows with a loss fault whose top loss verdict is true
//  windows to detect       per fault, windows from the one it starts in to the
//                          first that names it (mean over the detected ones)
//  false incidents         incidents opened in windows with no fault active,
//                          per 1,000 host-hours of such windows
//  incidents per fault     distinct incidents naming a fault's component during
//                          it (mean over the faults that got one; 1.0 is right)
//  per fault kind          faults found, windows the fault was named in of
//                          those it was judged in (its recall), and windows to
//                          detect; a false verdict has no kind, so precision
//                          is not split by kind
// Ours' incidents are the IncidentTracker's; the paper has no incidents, so a
// run of consecutive windows naming a component counts as one.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyzer/analysis/confidence_calibration.h"
#include "analyzer/analysis/incidents.h"
#include "sim/components.h"
#include "sim/faults.h"
#include "sim/verdicts.h"

namespace hostmesh::sim {

// The components a fault makes wrong, and what naming them means.
struct FaultTruth {
  std::vector<ComponentKey> components;  // any of them named = found
  std::vector<ComponentKey> dont_care;   // while the fault is active
};
FaultTruth TruthOf(const Fleet& fleet, const Fault& fault);

struct WindowRecord {
  std::int64_t start_ns = 0;  // simulation time
  std::int64_t end_ns = 0;
  std::uint64_t results = 0;
  std::uint32_t hosts = 0;  // present in the window
  Verdict ours;
  Verdict paper;
};

// An incident as the scorecard sees it.
struct IncidentSpan {
  ComponentKey key = 0;
  std::int64_t first_ns = 0;  // start of the first window that named it
  std::int64_t last_ns = 0;   // end of the last
  std::string kind{};         // analysis::IncidentKindName; empty for the paper's runs
  std::string diagnosis{};    // its diagnosis' type; empty when never diagnosed (or the paper's)
};
std::vector<IncidentSpan> OurIncidents(const std::vector<analysis::Incident>& incidents,
                                       const std::vector<std::uint32_t>& host_of,
                                       std::int64_t wall_offset_ns);
// Runs of consecutive windows naming a key.
std::vector<IncidentSpan> RunsOf(const std::vector<WindowRecord>& windows, bool paper);

// Precision and recall of one set of verdicts (all of a method's, or one category's).
struct Counts {
  std::uint64_t tp = 0, fp = 0, fn = 0;
  double precision() const { return tp + fp == 0 ? 1.0 : double(tp) / double(tp + fp); }
  double recall() const { return tp + fn == 0 ? 1.0 : double(tp) / double(tp + fn); }
  double f1() const {
    const double p = precision(), r = recall();
    return p + r == 0 ? 0 : 2 * p * r / (p + r);
  }
  bool empty() const { return tp + fp + fn == 0; }
  Counts& operator+=(const Counts& o) {
    tp += o.tp;
    fp += o.fp;
    fn += o.fn;
    return *this;
  }
};

// One fault kind's detection (the scorecard's header).
struct KindScore {
  std::uint64_t faults = 0, detected = 0;
  std::uint64_t windows = 0, windows_named = 0;  // judged in, and named in
  double windows_to_detect_sum = 0;
  // Latency faults: in each window wholly inside the fault that named it, the
  // verdict's added delay over the fault's configured mean (its level wanders
  // around that mean, so a window's own mean differs from it).
  std::vector<double> estimate_ratios;
  double recall() const { return windows == 0 ? 1.0 : double(windows_named) / double(windows); }
  double windows_to_detect() const {
    return detected == 0 ? 0 : windows_to_detect_sum / double(detected);
  }
  KindScore& operator+=(const KindScore& o);
};

// Time to name against the information limit (information_limit.h): over
// the named faults of a kind and loss-rate bucket that have a limit, the mean
// time from the fault's start to the end of the window that first named it,
// and the same for the reference test, in windows.
struct NameTimeScore {
  std::uint64_t faults = 0;                // with a limit
  std::uint64_t named = 0;                 // of those, named
  double measured_sum = 0, limit_sum = 0;  // over the named ones
  double measured() const { return named == 0 ? 0 : measured_sum / double(named); }
  double limit() const { return named == 0 ? 0 : limit_sum / double(named); }
  double ratio() const { return limit_sum <= 0 ? 0 : measured_sum / limit_sum; }
  NameTimeScore& operator+=(const NameTimeScore& o);
};
// Loss-rate buckets of the table: [0, 0.5%), [0.5%, 2%), [2%, 10%), [10%, 100%].
inline constexpr std::array<double, 3> kRateBucketBounds{0.005, 0.02, 0.10};
int RateBucket(double rate);
std::string RateBucketName(int bucket);  // "0.5-2%"

struct MethodScore {
  std::uint64_t tp = 0, fp = 0, fn = 0;
  // The same per category of verdict (loss, latency, host: Category), so a
  // fail-slow fault's verdicts are scored apart from the drops'.
  std::array<Counts, 3> by_category{};
  std::uint64_t top1_hits = 0, top1_windows = 0;
  std::uint64_t faults = 0, detected = 0;
  double windows_to_detect_sum = 0;
  std::uint64_t incidents = 0, false_incidents_fault_free = 0;
  double fault_free_host_hours = 0;
  double incidents_per_fault_sum = 0;
  std::uint64_t faults_with_incident = 0;
  std::map<FaultKind, KindScore> by_kind;
  std::map<std::pair<FaultKind, int>, NameTimeScore> name_times;  // by kind and RateBucket
  // Calibration: verdicts by the method's own (calibrated) confidence, in
  // fifths, how many of them were right, and the sum of their confidences
  // (don't-care verdicts left out): a calibrated method is right in each bin
  // about as often as its mean confidence there says.
  std::array<std::uint64_t, 5> named_by_confidence{};
  std::array<std::uint64_t, 5> right_by_confidence{};
  std::array<double, 5> confidence_sum{};
  // The same by raw score, per category (loss, latency, host), in tenths:
  // what `hostmesh-sim calibrate` fits the maps from.
  std::array<analysis::CalibrationCounts, 3> raw_counts{};
  // Brier score sums, (confidence - right)^2 over the same verdicts: of the
  // calibrated confidence, and of the raw score read as one.
  double brier_sum = 0;
  double raw_brier_sum = 0;
  double brier() const;
  double raw_brier() const;

  double precision() const { return Counts{tp, fp, fn}.precision(); }
  double recall() const { return Counts{tp, fp, fn}.recall(); }
  double f1() const { return Counts{tp, fp, fn}.f1(); }
  Counts counts() const { return {tp, fp, fn}; }
  double top1() const { return top1_windows == 0 ? 1.0 : double(top1_hits) / double(top1_windows); }
  double windows_to_detect() const {
    return detected == 0 ? 0 : windows_to_detect_sum / double(detected);
  }
  double detection_rate() const { return faults == 0 ? 1.0 : double(detected) / double(faults); }
  double false_incidents_per_khh() const {
    return fault_free_host_hours <= 0
               ? 0
               : 1000.0 * double(false_incidents_fault_free) / fault_free_host_hours;
  }
  double incidents_per_fault() const {
    return faults_with_incident == 0 ? 0 : incidents_per_fault_sum / double(faults_with_incident);
  }
  MethodScore& operator+=(const MethodScore& o);
};

struct Scorecard {
  MethodScore ours;
  MethodScore paper;
};

// Scores one run. `limit_windows` (SimResult's, per fault; may be empty)
// gives the time-to-name table its references.
Scorecard ScoreRun(const Fleet& fleet, const std::vector<Fault>& faults,
                   const std::vector<WindowRecord>& windows,
                   const std::vector<IncidentSpan>& our_incidents, std::int64_t window_ns,
                   const std::vector<double>& limit_windows = {});

}  // namespace hostmesh::sim
