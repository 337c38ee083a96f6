#pragma once

// One read of a NIC's counters and link state, and the difference of two reads.
// Plain structs: the readers fill a NicReading, Diff turns two of them into
// what the metrics and the wire need, and tests build both by hand.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hostmesh::agent::telemetry {

// The counters the agent reads per NIC; order is the index into NicReading.
enum class NicCounter : std::uint8_t {
  // RDMA port (sysfs counters/ and hw_counters/).
  kLinkDowned,
  kSymbolError,
  kPortRcvErrors,
  kPortXmitDiscards,
  kPortRcvDataBytes,  // port_rcv_data is in 4-byte words: the reader converts
  kPortXmitDataBytes,
  kOutOfSequence,
  kPacketSeqErr,
  kLocalAckTimeoutErr,
  kNpCnpSent,
  kRpCnpHandled,
  kRnrNakRetryErr,
  kPortRcvPackets,
  kPortXmitPackets,
  // Netdev: sysfs carrier_changes and ethtool statistics.
  kCarrierChanges,
  kLinkDownEvents,
  kRxDiscardsPhy,
  kRxOutOfBuffer,
  kRxSymbolErrors,
  kRxFcsErrors,
  kRxPause,  // link-level (802.3x) pause frames; per priority below
  kTxPause,
  // PCIe AER of the NIC's PCI function.
  kAerCorrectable,
  kAerNonfatal,
  kAerFatal,
};
inline constexpr std::size_t kNicCounterCount = 25;
inline constexpr std::size_t kPfcPriorities = 8;

// Where a value comes from, for counting what could not be read.
enum class Source : std::uint8_t { kRdma, kNetdev, kEthtool, kPcie };
inline constexpr std::size_t kSourceCount = 4;
std::string_view SourceName(Source source);  // "rdma", "netdev", "ethtool", "pcie"

enum class Carrier : std::uint8_t { kUnknown, kUp, kDown };

// sysfs current_/max_link_width and _speed; 0 = not known. Speeds in MT/s.
struct PcieLink {
  std::uint32_t current_width = 0;
  std::uint32_t max_width = 0;
  std::uint32_t current_speed_mts = 0;
  std::uint32_t max_speed_mts = 0;
  // Running narrower or slower than the device and slot allow.
  bool Downgraded() const {
    return (current_width != 0 && max_width != 0 && current_width < max_width) ||
           (current_speed_mts != 0 && max_speed_mts != 0 && current_speed_mts < max_speed_mts);
  }
  friend bool operator==(const PcieLink&, const PcieLink&) = default;
};

using Counters = std::array<std::optional<std::uint64_t>, kNicCounterCount>;
using PfcCounters = std::array<std::optional<std::uint64_t>, kPfcPriorities>;

struct NicReading {
  std::int64_t time_ns = 0;  // realtime of the read
  Counters counters{};       // nullopt: not available (or not readable) this time
  PfcCounters rx_pfc_pause{};
  PfcCounters tx_pfc_pause{};
  std::uint32_t port_state = 0;  // sysfs number (4 = ACTIVE); 0 = not known
  std::uint32_t phys_state = 0;  // sysfs number (5 = LinkUp); 0 = not known
  Carrier carrier = Carrier::kUnknown;
  std::optional<PcieLink> pcie;
  // Values that exist but could not be read or parsed, and devices that are
  // configured but missing, by source.
  std::array<std::uint32_t, kSourceCount> failures{};

  std::optional<std::uint64_t>& operator[](NicCounter c) {
    return counters[static_cast<std::size_t>(c)];
  }
  const std::optional<std::uint64_t>& operator[](NicCounter c) const {
    return counters[static_cast<std::size_t>(c)];
  }
  std::uint32_t total_failures() const;
};

// What the counters did between two reads; the state is the later read's.
struct NicDelta {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  Counters counters{};  // set where the counter was read at both ends
  PfcCounters rx_pfc_pause{};
  PfcCounters tx_pfc_pause{};
  std::uint32_t port_state = 0;
  std::uint32_t phys_state = 0;
  Carrier carrier = Carrier::kUnknown;
  std::optional<PcieLink> pcie;
  std::uint32_t read_failures = 0;   // of the later read
  std::uint32_t counter_resets = 0;  // counters that went backwards

  const std::optional<std::uint64_t>& operator[](NicCounter c) const {
    return counters[static_cast<std::size_t>(c)];
  }
};

// A counter lower than before was reset (driver reload, device reset): its
// delta is its new value, the count since the reset, as Prometheus' rate()
// assumes too.
NicDelta Diff(const NicReading& before, const NicReading& after);

}  // namespace hostmesh::agent::telemetry
