// Metrics declared once, as data: each row of a component's table names a
// family, its help, its labels and the reader that computes its series from
// the component's state at scrape time (Envoy's stats macros, as a table). A
// component lists its rows in one array and registers them in one loop, so
// its metrics read as a list, not as a long constructor body.
//
//   constexpr metrics::ValueRow<Stats> kRows[] = {
//       {MetricType::kCounter, "hostmesh_x_total", "Xs.", [](const Stats& s) { ... }},
//   };
//   metrics::AddValueRows<Stats>(registry, kRows, [&holder] { return holder.Get(); });
#pragma once

#include <span>
#include <string>
#include <vector>

#include "common/metrics/registry.h"

namespace hostmesh::metrics {

// One unlabelled series: read(state), 0 while there is no state yet.
template <typename State>
struct ValueRow {
  MetricType type;  // kCounter or kGauge
  const char* name;
  const char* help;
  double (*read)(const State& state);
};

// A labelled family: read(state) gives its series, label values in the order
// of `labels`. `state` is null while there is none yet: a family that has
// series before the first state (zeros by kind, say) says so itself.
template <typename State>
struct FamilyRow {
  MetricType type;  // kCounter or kGauge
  const char* name;
  const char* help;
  std::vector<std::string> labels;
  std::vector<ScrapedValue> (*read)(const State* state);
};

// `latest()` runs at each scrape and returns something pointer-like to the
// state the rows read (a shared_ptr of the latest snapshot, say), null while
// there is none. It must be as thread-safe as any scrape callback.
template <typename State, typename Latest>
void AddValueRows(Registry& registry, std::span<const ValueRow<State>> rows, Latest latest) {
  for (const ValueRow<State>& row : rows) {
    auto value = [latest, read = row.read] {
      const auto state = latest();
      return state ? read(*state) : 0.0;
    };
    if (row.type == MetricType::kCounter) {
      registry.AddCallbackCounter(row.name, row.help, std::move(value));
    } else {
      registry.AddCallbackGauge(row.name, row.help, std::move(value));
    }
  }
}

template <typename State, typename Latest>
void AddFamilyRows(Registry& registry, std::span<const FamilyRow<State>> rows, Latest latest) {
  for (const FamilyRow<State>& row : rows) {
    registry.AddCallbackFamily(row.type, row.name, row.help, row.labels, [latest, read = row.read] {
      const auto state = latest();
      return read(state ? &*state : nullptr);
    });
  }
}

}  // namespace hostmesh::metrics
