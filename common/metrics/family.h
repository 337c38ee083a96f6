// A metric family: one name, help and label-name list, and one child per
// distinct set of label values.
#pragma once

#include <initializer_list>
#include <map>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/metrics/counter.h"
#include "common/metrics/gauge.h"
#include "common/metrics/histogram.h"
#include "common/metrics/snapshot.h"

namespace hostmesh::metrics {

class FamilyBase {
 public:
  virtual ~FamilyBase() = default;
  // Copies the live values out; safe while other threads update them.
  virtual FamilySnapshot Collect() const = 0;
};

// T is Counter, Gauge or Histogram. Families are made by a Registry.
template <typename T>
class Family final : public FamilyBase {
 public:
  // declaration: name, help, type, label names (and bounds); series ignored.
  explicit Family(FamilySnapshot declaration) : declaration_(std::move(declaration)) {
    declaration_.series.clear();
  }
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  // The child for these label values (in label-name order), created on first
  // use; the reference stays valid as long as the registry. Takes a lock:
  // look children up once and keep the reference for the hot path. A wrong
  // number of values is a programming error: std::invalid_argument.
  T& WithLabels(std::initializer_list<std::string_view> values) {
    return Child(std::vector<std::string>(values.begin(), values.end()));
  }
  T& WithLabels(std::span<const std::string> values) {
    return Child(std::vector<std::string>(values.begin(), values.end()));
  }

  const std::string& name() const { return declaration_.name; }
  const std::vector<std::string>& label_names() const { return declaration_.label_names; }

  FamilySnapshot Collect() const override {
    FamilySnapshot out = declaration_;
    std::lock_guard lock(mu_);
    out.series.reserve(children_.size());
    for (const auto& [values, child] : children_) {  // std::map: sorted by label values
      SeriesSnapshot& series = out.series.emplace_back();
      series.label_values = values;
      child.SnapshotInto(series);
    }
    return out;
  }

 private:
  T& Child(std::vector<std::string> values) {
    if (values.size() != declaration_.label_names.size()) {
      throw std::invalid_argument("metric '" + declaration_.name + "' takes " +
                                  std::to_string(declaration_.label_names.size()) +
                                  " label values, got " + std::to_string(values.size()));
    }
    std::lock_guard lock(mu_);
    // std::map nodes never move, so the returned reference stays valid.
    if constexpr (std::is_same_v<T, Histogram>) {
      return children_.try_emplace(std::move(values), declaration_.bucket_bounds).first->second;
    } else {
      return children_.try_emplace(std::move(values)).first->second;
    }
  }

  FamilySnapshot declaration_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, T> children_;
};

}  // namespace hostmesh::metrics
