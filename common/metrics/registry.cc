#include "common/metrics/registry.h"

#include <prometheus/client_metric.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <utility>

#include "common/metrics/buckets.h"

namespace hostmesh::metrics {
namespace {

std::vector<std::string> SampleNames(const std::string& name, MetricType type) {
  if (type != MetricType::kHistogram) return {name};
  return {name, name + "_bucket", name + "_sum", name + "_count"};
}

ScrapeCallback UnlabelledCallback(const std::string& name, std::function<double()> value) {
  if (!value) throw std::invalid_argument("metric '" + name + "': callback is empty");
  return [value = std::move(value)] { return std::vector<ScrapedValue>{{{}, value()}}; };
}

bool ByLabels(const prometheus::ClientMetric& a, const prometheus::ClientMetric& b) {
  return a.label < b.label;
}

}  // namespace

class Registry::CallbackFamily {
 public:
  CallbackFamily(MetricType type, std::string name, std::string help,
                 std::vector<std::string> label_names, ScrapeCallback callback,
                 std::atomic<std::uint64_t>* conflicts)
      : conflicts_(conflicts),
        type_(type),
        name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        callback_(std::move(callback)) {}

  prometheus::MetricFamily Collect() const {
    prometheus::MetricFamily family;
    family.name = name_;
    family.help = help_;
    family.type = type_ == MetricType::kCounter ? prometheus::MetricType::Counter
                                                : prometheus::MetricType::Gauge;
    for (ScrapedValue& scraped : callback_()) {
      if (scraped.label_values.size() != label_names_.size()) {
        throw std::invalid_argument("callback for metric '" + name_ +
                                    "' returned the wrong number of label values");
      }
      prometheus::ClientMetric& metric = family.metric.emplace_back();
      for (std::size_t i = 0; i < label_names_.size(); ++i) {
        metric.label.push_back({label_names_[i], std::move(scraped.label_values[i])});
      }
      (type_ == MetricType::kCounter ? metric.counter.value : metric.gauge.value) = scraped.value;
    }
    // Stable: of series that share labels the first returned is kept.
    std::stable_sort(family.metric.begin(), family.metric.end(), ByLabels);
    const auto same = [](const prometheus::ClientMetric& a, const prometheus::ClientMetric& b) {
      return a.label == b.label;
    };
    // Label values often come from peers (host names two agents both claim):
    // a clash drops the later series, never the whole scrape.
    const auto end = std::unique(family.metric.begin(), family.metric.end(), same);
    if (end != family.metric.end()) {
      conflicts_->fetch_add(static_cast<std::uint64_t>(family.metric.end() - end),
                            std::memory_order_relaxed);
      family.metric.erase(end, family.metric.end());
    }
    return family;
  }

 private:
  std::atomic<std::uint64_t>* const conflicts_;
  const MetricType type_;
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const ScrapeCallback callback_;
};

Registry::Registry() = default;
Registry::~Registry() = default;

void Registry::Claim(const std::string& name, const std::string& help, MetricType type,
                     const std::vector<std::string>& label_names) {
  ValidateFamilyDeclaration(name, help, type, label_names);
  const std::vector<std::string> names = SampleNames(name, type);
  std::lock_guard lock(mu_);
  for (const std::string& sample : names) {
    if (sample_names_.contains(sample)) {
      throw std::invalid_argument("metric '" + name + "' clashes with '" + sample +
                                  "', already registered");
    }
  }
  sample_names_.insert(names.begin(), names.end());
}

prometheus::Family<prometheus::Counter>& Registry::AddCounterFamily(const std::string& name,
                                                                    const std::string& help) {
  Claim(name, help, MetricType::kCounter);
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry_);
}

prometheus::Family<prometheus::Gauge>& Registry::AddGaugeFamily(const std::string& name,
                                                                const std::string& help) {
  Claim(name, help, MetricType::kGauge);
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry_);
}

prometheus::Family<prometheus::Histogram>& Registry::AddHistogramFamily(const std::string& name,
                                                                        const std::string& help) {
  Claim(name, help, MetricType::kHistogram);
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry_);
}

prometheus::Counter& Registry::AddCounter(const std::string& name, const std::string& help) {
  return AddCounterFamily(name, help).Add({});
}

prometheus::Gauge& Registry::AddGauge(const std::string& name, const std::string& help) {
  return AddGaugeFamily(name, help).Add({});
}

prometheus::Histogram& Registry::AddHistogram(const std::string& name, const std::string& help,
                                              const std::vector<double>& bounds) {
  try {
    ValidateBucketBounds(bounds);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("metric '" + name + "': " + e.what());
  }
  return AddHistogramFamily(name, help).Add({}, bounds);
}

void Registry::AddCallbackFamily(MetricType type, std::string name, std::string help,
                                 std::vector<std::string> label_names, ScrapeCallback callback) {
  if (type == MetricType::kHistogram) {
    throw std::invalid_argument("metric '" + name + "': callback families are counters or gauges");
  }
  if (!callback) throw std::invalid_argument("metric '" + name + "': callback is empty");
  Claim(name, help, type, label_names);
  auto family =
      std::make_unique<CallbackFamily>(type, std::move(name), std::move(help),
                                       std::move(label_names), std::move(callback), &conflicts_);
  std::lock_guard lock(mu_);
  callbacks_.push_back(std::move(family));
}

void Registry::AddCallbackCounter(std::string name, std::string help,
                                  std::function<double()> value) {
  ScrapeCallback callback = UnlabelledCallback(name, std::move(value));
  AddCallbackFamily(MetricType::kCounter, std::move(name), std::move(help), {},
                    std::move(callback));
}

void Registry::AddCallbackGauge(std::string name, std::string help, std::function<double()> value) {
  ScrapeCallback callback = UnlabelledCallback(name, std::move(value));
  AddCallbackFamily(MetricType::kGauge, std::move(name), std::move(help), {}, std::move(callback));
}

std::vector<prometheus::MetricFamily> Registry::Collect() const {
  // Callback families are never removed, so the pointers outlive the lock;
  // collecting without it keeps slow callbacks from blocking registration.
  std::vector<const CallbackFamily*> callbacks;
  {
    std::lock_guard lock(mu_);
    for (const auto& family : callbacks_) callbacks.push_back(family.get());
  }
  std::vector<prometheus::MetricFamily> out = registry_.Collect();
  for (prometheus::MetricFamily& family : out) {
    std::sort(family.metric.begin(), family.metric.end(), ByLabels);
  }
  for (const CallbackFamily* family : callbacks) {
    prometheus::MetricFamily collected = family->Collect();
    if (!collected.metric.empty()) out.push_back(std::move(collected));
  }
  std::sort(out.begin(), out.end(),
            [](const prometheus::MetricFamily& a, const prometheus::MetricFamily& b) {
              return a.name < b.name;
            });
  return out;
}

}  // namespace hostmesh::metrics
