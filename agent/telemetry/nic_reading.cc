#include "agent/telemetry/nic_reading.h"

namespace hostmesh::agent::telemetry {
namespace {

template <std::size_t N>
void DiffAll(const std::array<std::optional<std::uint64_t>, N>& before,
             const std::array<std::optional<std::uint64_t>, N>& after,
             std::array<std::optional<std::uint64_t>, N>& out, std::uint32_t& resets) {
  for (std::size_t i = 0; i < N; ++i) {
    if (!before[i] || !after[i]) continue;
    if (*after[i] >= *before[i]) {
      out[i] = *after[i] - *before[i];
    } else {
      out[i] = *after[i];
      ++resets;
    }
  }
}

}  // namespace

std::string_view SourceName(Source source) {
  switch (source) {
    case Source::kRdma:
      return "rdma";
    case Source::kNetdev:
      return "netdev";
    case Source::kEthtool:
      return "ethtool";
    case Source::kPcie:
      return "pcie";
  }
  return "unknown";
}

std::uint32_t NicReading::total_failures() const {
  std::uint32_t total = 0;
  for (std::uint32_t f : failures) total += f;
  return total;
}

NicDelta Diff(const NicReading& before, const NicReading& after) {
  NicDelta d;
  d.start_ns = before.time_ns;
  d.end_ns = after.time_ns;
  DiffAll(before.counters, after.counters, d.counters, d.counter_resets);
  DiffAll(before.rx_pfc_pause, after.rx_pfc_pause, d.rx_pfc_pause, d.counter_resets);
  DiffAll(before.tx_pfc_pause, after.tx_pfc_pause, d.tx_pfc_pause, d.counter_resets);
  d.port_state = after.port_state;
  d.phys_state = after.phys_state;
  d.carrier = after.carrier;
  d.pcie = after.pcie;
  d.read_failures = after.total_failures();
  return d;
}

}  // namespace hostmesh::agent::telemetry
