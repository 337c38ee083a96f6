#pragma once

// NicTelemetry records for analyzer tests.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>

#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::analyzer::telemetry::testing {

struct Delta {
  v1::NicCounter counter;
  std::uint64_t delta;
  std::optional<std::uint32_t> priority = std::nullopt;
};

inline v1::NicTelemetry Sample(std::uint32_t nic, std::int64_t start_ns, std::int64_t end_ns,
                               std::initializer_list<Delta> deltas) {
  v1::NicTelemetry t;
  t.set_nic(nic);
  t.set_start_ns(start_ns);
  t.set_end_ns(end_ns);
  for (const Delta& d : deltas) {
    v1::CounterDelta* out = t.add_deltas();
    out->set_counter(d.counter);
    out->set_delta(d.delta);
    if (d.priority) out->set_priority(*d.priority);
  }
  t.set_port_state(4);
  t.set_phys_state(5);
  t.set_carrier(v1::CARRIER_UP);
  return t;
}

}  // namespace hostmesh::analyzer::telemetry::testing
