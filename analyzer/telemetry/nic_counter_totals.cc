#include "analyzer/telemetry/nic_counter_totals.h"

#include <cctype>

namespace hostmesh::analyzer::telemetry {

bool PcieLinkState::Downgraded() const {
  return (current_width != 0 && max_width != 0 && current_width < max_width) ||
         (current_speed_mts != 0 && max_speed_mts != 0 && current_speed_mts < max_speed_mts);
}

void NicCounterTotals::Add(const v1::NicTelemetry& sample) {
  if (samples == 0 || sample.start_ns() < start_ns) start_ns = sample.start_ns();
  const bool latest = samples == 0 || sample.end_ns() >= end_ns;
  ++samples;
  for (const v1::CounterDelta& d : sample.deltas()) {
    const bool pause =
        d.counter() == v1::NIC_COUNTER_RX_PAUSE || d.counter() == v1::NIC_COUNTER_TX_PAUSE;
    if (pause && d.has_priority()) {
      if (d.priority() >= kPfcPriorities) continue;  // not a PFC priority: ignored
      auto& slot =
          (d.counter() == v1::NIC_COUNTER_RX_PAUSE ? rx_pfc_pause : tx_pfc_pause)[d.priority()];
      slot = slot.value_or(0) + d.delta();
    } else {
      deltas[d.counter()] += d.delta();
    }
  }
  read_failures += sample.read_failures();
  counter_resets += sample.counter_resets();
  if (!latest) return;
  end_ns = sample.end_ns();
  port_state = sample.port_state();
  phys_state = sample.phys_state();
  carrier = sample.carrier();
  if (sample.has_pcie()) {
    const v1::PcieLink& p = sample.pcie();
    pcie =
        PcieLinkState{p.current_width(), p.max_width(), p.current_speed_mts(), p.max_speed_mts()};
  } else {
    pcie.reset();
  }
}

std::optional<std::uint64_t> NicCounterTotals::Get(v1::NicCounter counter) const {
  const auto it = deltas.find(counter);
  if (it == deltas.end()) return std::nullopt;
  return it->second;
}

std::optional<std::uint64_t> NicCounterTotals::PauseFrames(bool received) const {
  std::optional<std::uint64_t> total =
      Get(received ? v1::NIC_COUNTER_RX_PAUSE : v1::NIC_COUNTER_TX_PAUSE);
  for (const auto& p : received ? rx_pfc_pause : tx_pfc_pause) {
    if (p) total = total.value_or(0) + *p;
  }
  return total;
}

std::string CounterName(v1::NicCounter counter) {
  std::string name = v1::NicCounter_Name(counter);
  if (name.empty()) return "counter_" + std::to_string(static_cast<int>(counter));
  constexpr std::string_view kPrefix = "NIC_COUNTER_";
  if (std::string_view(name).starts_with(kPrefix)) name.erase(0, kPrefix.size());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

std::string_view CarrierName(v1::Carrier carrier) {
  switch (carrier) {
    case v1::CARRIER_UP:
      return "up";
    case v1::CARRIER_DOWN:
      return "down";
    default:
      break;
  }
  return "unknown";
}

}  // namespace hostmesh::analyzer::telemetry
