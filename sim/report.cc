#include "sim/report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "sim/calibration_report.h"
#include "sim/host_clock.h"

namespace hostmesh::sim {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::vector<std::string> Names(const Fleet& fleet, const std::vector<ComponentKey>& keys) {
  std::vector<std::string> out;
  for (const ComponentKey k : keys) out.push_back(DescribeKey(fleet, k));
  return out;
}

std::vector<ComponentKey> TruthAt(const Fleet& fleet, const std::vector<Fault>& faults,
                                  std::int64_t start, std::int64_t end) {
  std::set<ComponentKey> keys;
  for (const Fault& f : faults) {
    const std::int64_t overlap = std::min(f.end_ns, end) - std::max(f.start_ns, start);
    if (2 * overlap < end - start) continue;
    for (const ComponentKey k : TruthOf(fleet, f).components) keys.insert(k);
  }
  return {keys.begin(), keys.end()};
}

// Per fault kind: faults found, windows named of those judged (recall), and
// windows to the first correct verdict, hostmesh beside the paper's method.
// How well the named latency faults' added delay was estimated.
void PrintEstimates(std::ostream& out, const MethodScore& o) {
  bool header = false;
  for (const auto& [kind, k] : o.by_kind) {
    if (k.estimate_ratios.empty()) continue;
    if (!header) {
      out << "  added delay named / the fault's mean, in windows wholly inside it (hostmesh): "
             "median [10th, 90th percentile], share within 30%\n";
      header = true;
    }
    std::vector<double> r = k.estimate_ratios;
    std::sort(r.begin(), r.end());
    const auto at = [&](double q) { return r[static_cast<std::size_t>(q * double(r.size() - 1))]; };
    const auto within =
        std::count_if(r.begin(), r.end(), [](double x) { return std::abs(x - 1) <= 0.3; });
    char buf[200];
    std::snprintf(buf, sizeof buf, "    %-16s %5.2f [%4.2f, %4.2f] %5.3f of %zu\n",
                  std::string(FaultKindName(kind)).c_str(), at(0.5), at(0.1), at(0.9),
                  double(within) / double(r.size()), r.size());
    out << buf;
  }
}

void PrintByKind(std::ostream& out, const MethodScore& o, const MethodScore& p) {
  if (o.by_kind.empty()) return;
  out << "  per fault kind (hostmesh | paper): found, recall over the windows judged, "
         "windows to first correct verdict\n";
  for (const auto& [kind, k] : o.by_kind) {
    const auto it = p.by_kind.find(kind);
    const KindScore q = it == p.by_kind.end() ? KindScore{} : it->second;
    char buf[200];
    std::snprintf(
        buf, sizeof buf, "    %-16s %3llu/%-3llu %6.3f %6.2f | %3llu/%-3llu %6.3f %6.2f\n",
        std::string(FaultKindName(kind)).c_str(), static_cast<unsigned long long>(k.detected),
        static_cast<unsigned long long>(k.faults), k.recall(), k.windows_to_detect(),
        static_cast<unsigned long long>(q.detected), static_cast<unsigned long long>(q.faults),
        q.recall(), q.windows_to_detect());
    out << buf;
  }
  PrintEstimates(out, o);
}

// Per loss kind and rate: time to name against the information limit
// (information_limit.h), hostmesh beside the paper's method.
void PrintNameTimes(std::ostream& out, const MethodScore& o, const MethodScore& p) {
  if (o.name_times.empty()) return;
  out << "  time to name vs the limit (Wald's SPRT at hostmesh's false-alarm rate), windows from "
         "the fault's start to the end of the window naming it, over the faults named "
         "(hostmesh | paper):\n";
  for (const auto& [key, k] : o.name_times) {
    const auto it = p.name_times.find(key);
    const NameTimeScore q = it == p.name_times.end() ? NameTimeScore{} : it->second;
    char buf[220];
    std::snprintf(
        buf, sizeof buf,
        "    %-14s %-7s %3llu/%-3llu %6.2f vs limit %5.2f (x%.2f) | %3llu/%-3llu %6.2f vs "
        "limit %5.2f (x%.2f)\n",
        std::string(FaultKindName(key.first)).c_str(), RateBucketName(key.second).c_str(),
        static_cast<unsigned long long>(k.named), static_cast<unsigned long long>(k.faults),
        k.measured(), k.limit(), k.ratio(), static_cast<unsigned long long>(q.named),
        static_cast<unsigned long long>(q.faults), q.measured(), q.limit(), q.ratio());
    out << buf;
  }
}

nlohmann::json IntervalJson(const Interval& i) {
  return nlohmann::json::array({i.lo, i.hi});
}

}  // namespace

void PrintIntervals(std::ostream& out, const ScoreIntervals& ours, const ScoreIntervals& paper) {
  out << "  95% intervals (bootstrap over " << ours.scenarios << " scenarios, " << kBootstrapRounds
      << " rounds):\n";
  const auto row = [&](const char* name, const Interval& o, const Interval& p) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "    %-10s hostmesh [%.3f, %.3f]   paper [%.3f, %.3f]\n", name,
                  o.lo, o.hi, p.lo, p.hi);
    out << buf;
  };
  row("precision", ours.precision, paper.precision);
  row("recall", ours.recall, paper.recall);
  row("F1", ours.f1, paper.f1);
}

nlohmann::json IntervalsJson(const ScoreIntervals& s) {
  return {{"scenarios", s.scenarios},
          {"rounds", kBootstrapRounds},
          {"precision", IntervalJson(s.precision)},
          {"recall", IntervalJson(s.recall)},
          {"f1", IntervalJson(s.f1)}};
}

void PrintScorecard(std::ostream& out, const Scorecard& card, const std::string& title) {
  out << title << "\n";
  const auto row = [&](const std::string& name, const std::string& ours, const std::string& paper) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %-44s %12s %12s\n", name.c_str(), ours.c_str(),
                  paper.c_str());
    out << buf;
  };
  const MethodScore& o = card.ours;
  const MethodScore& p = card.paper;
  row("metric", "hostmesh", "paper");
  row("precision (culprit set, per window)", Fixed(o.precision(), 3), Fixed(p.precision(), 3));
  row("recall", Fixed(o.recall(), 3), Fixed(p.recall(), 3));
  row("F1", Fixed(o.f1(), 3), Fixed(p.f1(), 3));
  constexpr std::array<const char*, 3> kCategories{"loss", "latency", "host"};
  for (std::size_t c = 0; c < kCategories.size(); ++c) {
    const Counts &oc = o.by_category[c], &pc = p.by_category[c];
    if (oc.empty() && pc.empty()) continue;
    const std::string what = std::string("  ") + kCategories[c] + " verdicts: ";
    row(what + "precision", Fixed(oc.precision(), 3), Fixed(pc.precision(), 3));
    row(what + "recall", Fixed(oc.recall(), 3), Fixed(pc.recall(), 3));
    row(what + "F1", Fixed(oc.f1(), 3), Fixed(pc.f1(), 3));
  }
  row("top-1 accuracy (windows with a loss fault)", Fixed(o.top1(), 3), Fixed(p.top1(), 3));
  row("faults found", std::to_string(o.detected) + "/" + std::to_string(o.faults),
      std::to_string(p.detected) + "/" + std::to_string(p.faults));
  row("windows to first correct verdict (mean)", Fixed(o.windows_to_detect(), 2),
      Fixed(p.windows_to_detect(), 2));
  row("false incidents / 1000 host-h, fault-free", Fixed(o.false_incidents_per_khh(), 2),
      Fixed(p.false_incidents_per_khh(), 2));
  row("incidents per fault", Fixed(o.incidents_per_fault(), 2), Fixed(p.incidents_per_fault(), 2));
  row("(fault-free host-hours)", Fixed(o.fault_free_host_hours, 1), "");
  PrintByKind(out, o, p);
  PrintNameTimes(out, o, p);
  out << "  calibration of hostmesh's confidence (verdicts right / named, mean confidence):\n";
  for (std::size_t i = 0; i < o.named_by_confidence.size(); ++i) {
    if (o.named_by_confidence[i] == 0) continue;
    const auto named = static_cast<double>(o.named_by_confidence[i]);
    char buf[120];
    std::snprintf(buf, sizeof buf, "    confidence %.1f-%.1f: %5.1f%% right of %llu (mean %.2f)\n",
                  static_cast<double>(i) / 5.0, static_cast<double>(i + 1) / 5.0,
                  100.0 * static_cast<double>(o.right_by_confidence[i]) / named,
                  static_cast<unsigned long long>(o.named_by_confidence[i]),
                  o.confidence_sum[i] / named);
    out << buf;
  }
  char brier[120];
  std::snprintf(brier, sizeof brier,
                "    Brier score (lower is better): %.4f calibrated, %.4f the raw score\n",
                o.brier(), o.raw_brier());
  out << brier;
  PrintRawCalibration(out, o.raw_counts);
}

void PrintWindows(std::ostream& out, const Fleet& fleet, const std::vector<Fault>& faults,
                  const SimResult& result) {
  const auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? std::string("-") : s;
  };
  for (const WindowRecord& w : result.windows) {
    out << "window " << w.start_ns / 1'000'000'000 << "-" << w.end_ns / 1'000'000'000 << "s ("
        << w.results << " results)\n"
        << "  truth: " << join(Names(fleet, TruthAt(fleet, faults, w.start_ns, w.end_ns))) << "\n"
        << "  ours:  " << join(Names(fleet, w.ours.named)) << "\n"
        << "  paper: " << join(Names(fleet, w.paper.named)) << "\n";
  }
}

namespace {

nlohmann::json CategoriesJson(const std::array<Counts, 3>& by_category) {
  constexpr std::array<const char*, 3> kCategories{"loss", "latency", "host"};
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t c = 0; c < kCategories.size(); ++c) {
    const Counts& n = by_category[c];
    j[kCategories[c]] = {{"tp", n.tp},           {"fp", n.fp},
                         {"fn", n.fn},           {"precision", n.precision()},
                         {"recall", n.recall()}, {"f1", n.f1()}};
  }
  return j;
}

nlohmann::json KindsJson(const std::map<FaultKind, KindScore>& by_kind) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [kind, k] : by_kind) {
    j[std::string(FaultKindName(kind))] = {
        {"faults", k.faults},   {"found", k.detected},
        {"windows", k.windows}, {"windows_named", k.windows_named},
        {"recall", k.recall()}, {"windows_to_first_correct", k.windows_to_detect()}};
  }
  return j;
}

nlohmann::json NameTimesJson(const std::map<std::pair<FaultKind, int>, NameTimeScore>& times) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [key, k] : times) {
    j.push_back({{"kind", std::string(FaultKindName(key.first))},
                 {"rate", RateBucketName(key.second)},
                 {"faults", k.faults},
                 {"named", k.named},
                 {"windows_to_name", k.measured()},
                 {"limit_windows_to_name", k.limit()},
                 {"ratio", k.ratio()}});
  }
  return j;
}

}  // namespace

nlohmann::json ScoreJson(const MethodScore& s) {
  return {
      {"precision", s.precision()},
      {"recall", s.recall()},
      {"f1", s.f1()},
      {"top1", s.top1()},
      {"faults", s.faults},
      {"faults_found", s.detected},
      {"windows_to_first_correct", s.windows_to_detect()},
      {"false_incidents_per_1000_host_hours_fault_free", s.false_incidents_per_khh()},
      {"fault_free_host_hours", s.fault_free_host_hours},
      {"incidents", s.incidents},
      {"incidents_per_fault", s.incidents_per_fault()},
      {"tp", s.tp},
      {"fp", s.fp},
      {"fn", s.fn},
      {"by_category", CategoriesJson(s.by_category)},
      {"by_kind", KindsJson(s.by_kind)},
      {"time_to_name_vs_limit", NameTimesJson(s.name_times)},
      {"calibration_named", s.named_by_confidence},
      {"calibration_right", s.right_by_confidence},
      {"calibration_confidence_sum", s.confidence_sum},
      {"raw_calibration", RawCountsJson(s.raw_counts)},
      {"brier", s.brier()},
      {"raw_brier", s.raw_brier()},
  };
}

nlohmann::json OutcomeJson(const Fleet& fleet, const Scenario& scenario,
                           const ScenarioOutcome& outcome) {
  nlohmann::json windows = nlohmann::json::array();
  for (const WindowRecord& w : outcome.result.windows) {
    windows.push_back({
        {"start_s", ToSeconds(w.start_ns)},
        {"end_s", ToSeconds(w.end_ns)},
        {"results", w.results},
        {"truth", Names(fleet, TruthAt(fleet, scenario.config.faults, w.start_ns, w.end_ns))},
        {"hostmesh", Names(fleet, w.ours.named)},
        {"paper", Names(fleet, w.paper.named)},
    });
  }
  nlohmann::json incidents = nlohmann::json::array();
  for (const IncidentSpan& i : outcome.result.incidents) {
    incidents.push_back({{"suspect", DescribeKey(fleet, i.key)},
                         {"kind", i.kind},
                         {"diagnosis", i.diagnosis},
                         {"first_s", ToSeconds(i.first_ns)},
                         {"last_s", ToSeconds(i.last_ns)}});
  }
  return {
      {"name", outcome.name},
      {"seed", scenario.config.seed},
      {"faults", outcome.faults},
      {"probes", outcome.result.probes},
      {"paths",
       {{"resolved", outcome.result.paths_resolved},
        {"unresolved", outcome.result.paths_unresolved},
        {"continued", outcome.result.paths_continued},
        {"cut_short", outcome.result.paths_cut_short}}},
      {"wall_seconds", outcome.result.wall_seconds},
      {"hostmesh", ScoreJson(outcome.card.ours)},
      {"paper", ScoreJson(outcome.card.paper)},
      {"windows", windows},
      {"incidents", incidents},
  };
}

}  // namespace hostmesh::sim
