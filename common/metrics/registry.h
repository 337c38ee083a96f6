// The one metrics registry of a process. Components declare their families
// once, from a Registry& handed to them, and keep references to the children
// they update; the /metrics handler calls Collect() and renders the result.
//
//   struct TrackerStats {
//     explicit TrackerStats(metrics::Registry& r)
//         : timeouts(r.AddCounterFamily("hostmesh_probe_timeouts_total",
//                                       "Probes that got no reply in time.", {"src", "dst"})) {}
//     metrics::Family<metrics::Counter>& timeouts;
//   };
//   stats.timeouts.WithLabels({"nic0", "nic1"}).Inc();
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/metrics/family.h"
#include "common/metrics/snapshot.h"

namespace hostmesh::metrics {

// One series of a callback family, computed at scrape time.
struct ScrapedValue {
  std::vector<std::string> label_values;
  double value = 0;
};

// Runs on the scraping thread, concurrently with everything else: it must be
// thread-safe and quick (read an atomic, /proc/self/stat).
using ScrapeCallback = std::function<std::vector<ScrapedValue>()>;

// Declaration errors (bad or duplicate names, see names.h) throw
// std::invalid_argument: they are programming errors found at start-up.
class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Family<Counter>& AddCounterFamily(std::string name, std::string help,
                                    std::vector<std::string> label_names);
  Family<Gauge>& AddGaugeFamily(std::string name, std::string help,
                                std::vector<std::string> label_names);
  Family<Histogram>& AddHistogramFamily(std::string name, std::string help,
                                        std::vector<std::string> label_names,
                                        std::vector<double> bucket_bounds);

  // Unlabelled metrics: the single child exists (and is exported as 0) from
  // the start.
  Counter& AddCounter(std::string name, std::string help);
  Gauge& AddGauge(std::string name, std::string help);
  Histogram& AddHistogram(std::string name, std::string help, std::vector<double> bucket_bounds);

  // Families whose values live elsewhere and are read at scrape time. type is
  // kCounter or kGauge. A callback returning the wrong number of label values
  // or the same label values twice makes Collect() throw std::invalid_argument.
  void AddCallbackFamily(MetricType type, std::string name, std::string help,
                         std::vector<std::string> label_names, ScrapeCallback callback);
  void AddCallbackCounter(std::string name, std::string help, std::function<double()> value);
  void AddCallbackGauge(std::string name, std::string help, std::function<double()> value);

  // Every family sorted by name, its series sorted by label values.
  std::vector<FamilySnapshot> Collect() const;

 private:
  template <typename T>
  Family<T>& AddFamily(FamilySnapshot declaration);
  void Register(std::unique_ptr<FamilyBase> family, const FamilySnapshot& declaration);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<FamilyBase>> families_;
  // Every sample name exported (a histogram claims _bucket, _sum and _count),
  // so that no two families can emit the same series name.
  std::set<std::string> sample_names_;
};

}  // namespace hostmesh::metrics
