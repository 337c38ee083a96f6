#include "common/metrics/registry.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "common/metrics/names.h"

namespace hostmesh::metrics {
namespace {

FamilySnapshot Declare(MetricType type, std::string name, std::string help,
                       std::vector<std::string> label_names,
                       std::vector<double> bucket_bounds = {}) {
  FamilySnapshot declaration;
  declaration.name = std::move(name);
  declaration.help = std::move(help);
  declaration.type = type;
  declaration.label_names = std::move(label_names);
  declaration.bucket_bounds = std::move(bucket_bounds);
  return declaration;
}

std::vector<std::string> SampleNames(const FamilySnapshot& declaration) {
  if (declaration.type != MetricType::kHistogram) return {declaration.name};
  return {declaration.name, declaration.name + "_bucket", declaration.name + "_sum",
          declaration.name + "_count"};
}

ScrapeCallback UnlabelledCallback(const std::string& name, std::function<double()> value) {
  if (!value) throw std::invalid_argument("metric '" + name + "': callback is empty");
  return [value = std::move(value)] { return std::vector<ScrapedValue>{{{}, value()}}; };
}

class CallbackFamily final : public FamilyBase {
 public:
  CallbackFamily(FamilySnapshot declaration, ScrapeCallback callback)
      : declaration_(std::move(declaration)), callback_(std::move(callback)) {}

  FamilySnapshot Collect() const override {
    FamilySnapshot out = declaration_;
    for (ScrapedValue& scraped : callback_()) {
      if (scraped.label_values.size() != out.label_names.size()) {
        throw std::invalid_argument("callback for metric '" + out.name +
                                    "' returned the wrong number of label values");
      }
      SeriesSnapshot& series = out.series.emplace_back();
      series.label_values = std::move(scraped.label_values);
      series.value = scraped.value;
    }
    auto by_labels = [](const SeriesSnapshot& a, const SeriesSnapshot& b) {
      return a.label_values < b.label_values;
    };
    std::sort(out.series.begin(), out.series.end(), by_labels);
    auto same_labels = [](const SeriesSnapshot& a, const SeriesSnapshot& b) {
      return a.label_values == b.label_values;
    };
    if (std::adjacent_find(out.series.begin(), out.series.end(), same_labels) != out.series.end()) {
      throw std::invalid_argument("callback for metric '" + out.name +
                                  "' returned the same label values twice");
    }
    return out;
  }

 private:
  const FamilySnapshot declaration_;
  const ScrapeCallback callback_;
};

}  // namespace

Registry::Registry() = default;
Registry::~Registry() = default;

template <typename T>
Family<T>& Registry::AddFamily(FamilySnapshot declaration) {
  auto family = std::make_unique<Family<T>>(declaration);
  Family<T>& ref = *family;
  Register(std::move(family), declaration);
  return ref;
}

void Registry::Register(std::unique_ptr<FamilyBase> family, const FamilySnapshot& declaration) {
  ValidateFamilyDeclaration(declaration);
  const std::vector<std::string> names = SampleNames(declaration);
  std::lock_guard lock(mu_);
  for (const std::string& name : names) {
    if (sample_names_.contains(name)) {
      throw std::invalid_argument("metric '" + declaration.name + "' clashes with '" + name +
                                  "', already registered");
    }
  }
  sample_names_.insert(names.begin(), names.end());
  families_.push_back(std::move(family));
}

Family<Counter>& Registry::AddCounterFamily(std::string name, std::string help,
                                            std::vector<std::string> label_names) {
  return AddFamily<Counter>(
      Declare(MetricType::kCounter, std::move(name), std::move(help), std::move(label_names)));
}

Family<Gauge>& Registry::AddGaugeFamily(std::string name, std::string help,
                                        std::vector<std::string> label_names) {
  return AddFamily<Gauge>(
      Declare(MetricType::kGauge, std::move(name), std::move(help), std::move(label_names)));
}

Family<Histogram>& Registry::AddHistogramFamily(std::string name, std::string help,
                                                std::vector<std::string> label_names,
                                                std::vector<double> bucket_bounds) {
  return AddFamily<Histogram>(Declare(MetricType::kHistogram, std::move(name), std::move(help),
                                      std::move(label_names), std::move(bucket_bounds)));
}

Counter& Registry::AddCounter(std::string name, std::string help) {
  return AddCounterFamily(std::move(name), std::move(help), {}).WithLabels({});
}

Gauge& Registry::AddGauge(std::string name, std::string help) {
  return AddGaugeFamily(std::move(name), std::move(help), {}).WithLabels({});
}

Histogram& Registry::AddHistogram(std::string name, std::string help,
                                  std::vector<double> bucket_bounds) {
  return AddHistogramFamily(std::move(name), std::move(help), {}, std::move(bucket_bounds))
      .WithLabels({});
}

void Registry::AddCallbackFamily(MetricType type, std::string name, std::string help,
                                 std::vector<std::string> label_names, ScrapeCallback callback) {
  if (type == MetricType::kHistogram) {
    throw std::invalid_argument("metric '" + name + "': callback families are counters or gauges");
  }
  if (!callback) throw std::invalid_argument("metric '" + name + "': callback is empty");
  FamilySnapshot declaration =
      Declare(type, std::move(name), std::move(help), std::move(label_names));
  Register(std::make_unique<CallbackFamily>(declaration, std::move(callback)), declaration);
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

std::vector<FamilySnapshot> Registry::Collect() const {
  // Families are never removed, so the pointers outlive the lock; collecting
  // without it keeps slow callbacks from blocking registration.
  std::vector<const FamilyBase*> families;
  {
    std::lock_guard lock(mu_);
    families.reserve(families_.size());
    for (const auto& family : families_) families.push_back(family.get());
  }
  std::vector<FamilySnapshot> out;
  out.reserve(families.size());
  for (const FamilyBase* family : families) out.push_back(family->Collect());
  std::sort(out.begin(), out.end(),
            [](const FamilySnapshot& a, const FamilySnapshot& b) { return a.name < b.name; });
  return out;
}

}  // namespace hostmesh::metrics
