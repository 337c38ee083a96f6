// The one metrics registry of a process: prometheus-cpp's registry for the
// counters, gauges and histograms a component updates itself, plus callback
// families whose values live elsewhere and are read at scrape time (the
// agent's loop snapshot, the analyzer's latest window). Components declare
// their metrics once, from a Registry& handed to them, and keep references to
// the children they update (prometheus-cpp's Family::Add takes a lock and
// hashes the labels: never on a hot path).
//
//   struct Stats {
//     explicit Stats(metrics::Registry& r)
//         : drops(r.AddCounterFamily("hostmesh_drops_total", "Drops, by reason.")
//                     .Add({{"reason", "full"}})) {}
//     prometheus::Counter& drops;
//   };
//   stats.drops.Increment();
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/metrics/names.h"

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

  // Families of prometheus-cpp; their children are made with Family::Add.
  prometheus::Family<prometheus::Counter>& AddCounterFamily(const std::string& name,
                                                            const std::string& help);
  prometheus::Family<prometheus::Gauge>& AddGaugeFamily(const std::string& name,
                                                        const std::string& help);
  prometheus::Family<prometheus::Histogram>& AddHistogramFamily(const std::string& name,
                                                                const std::string& help);

  // Unlabelled metrics: the single child exists (and is exported as 0) from
  // the start.
  prometheus::Counter& AddCounter(const std::string& name, const std::string& help);
  prometheus::Gauge& AddGauge(const std::string& name, const std::string& help);
  // bounds: finite and strictly ascending (buckets.h); +Inf is implied.
  prometheus::Histogram& AddHistogram(const std::string& name, const std::string& help,
                                      const std::vector<double>& bounds);

  // Families whose values are read at scrape time. type is kCounter or kGauge.
  // Labels are exported in the order of label_names. A callback returning the
  // wrong number of label values makes Collect() throw std::invalid_argument
  // (a programming error); one returning the same label values twice keeps
  // the first and counts the rest in series_conflicts(): label values often
  // come from peers, and a clash must not fail the whole scrape.
  void AddCallbackFamily(MetricType type, std::string name, std::string help,
                         std::vector<std::string> label_names, ScrapeCallback callback);
  void AddCallbackCounter(std::string name, std::string help, std::function<double()> value);
  void AddCallbackGauge(std::string name, std::string help, std::function<double()> value);

  // Every family with at least one series, sorted by name, its series sorted
  // by labels: what the text serializer writes (exposition.h).
  std::vector<prometheus::MetricFamily> Collect() const;

  // Series dropped by Collect for repeating another's labels, since start.
  std::uint64_t series_conflicts() const { return conflicts_.load(std::memory_order_relaxed); }

 private:
  class CallbackFamily;
  // Checks the conventions and that no family already exports these sample
  // names (a histogram claims _bucket, _sum and _count).
  void Claim(const std::string& name, const std::string& help, MetricType type,
             const std::vector<std::string>& label_names = {});

  prometheus::Registry registry_{prometheus::Registry::InsertBehavior::Throw};
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<CallbackFamily>> callbacks_;
  std::set<std::string> sample_names_;
  std::atomic<std::uint64_t> conflicts_{0};
};

}  // namespace hostmesh::metrics
