#pragma once

// One NIC's counter deltas summed over a period (a window, or an API query's
// range) and its link state at the end of it: what diagnosis and the API read
// of the agents' NicTelemetry. Pure, no I/O.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::analyzer::telemetry {

inline constexpr std::size_t kPfcPriorities = 8;

struct PcieLinkState {
  std::uint32_t current_width = 0;
  std::uint32_t max_width = 0;
  std::uint32_t current_speed_mts = 0;
  std::uint32_t max_speed_mts = 0;
  // Narrower or slower than device and slot allow (a known 0 never counts).
  bool Downgraded() const;
};

struct NicCounterTotals {
  std::int64_t start_ns = 0;  // earliest sample start; 0 before any sample
  std::int64_t end_ns = 0;    // latest sample end
  std::uint32_t samples = 0;
  // Counters other than per-priority pause; a counter absent was never read.
  std::map<v1::NicCounter, std::uint64_t> deltas;
  std::array<std::optional<std::uint64_t>, kPfcPriorities> rx_pfc_pause{};
  std::array<std::optional<std::uint64_t>, kPfcPriorities> tx_pfc_pause{};
  // State as of the latest sample (end_ns).
  std::uint32_t port_state = 0;
  std::uint32_t phys_state = 0;
  v1::Carrier carrier = v1::CARRIER_UNKNOWN;
  std::optional<PcieLinkState> pcie;
  std::uint64_t read_failures = 0;  // summed over samples
  std::uint64_t counter_resets = 0;

  // Folds one sample in; samples may come in any order.
  void Add(const v1::NicTelemetry& sample);
  std::optional<std::uint64_t> Get(v1::NicCounter counter) const;
  // Link-level plus every priority's pause frames; nullopt when none was read.
  std::optional<std::uint64_t> PauseFrames(bool received) const;
};

// "symbol_error" for NIC_COUNTER_SYMBOL_ERROR: the API's and the incidents' name.
std::string CounterName(v1::NicCounter counter);
std::string_view CarrierName(v1::Carrier carrier);  // "up", "down", "unknown"

}  // namespace hostmesh::analyzer::telemetry
