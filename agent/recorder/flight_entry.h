#pragma once

// One flight recorder event as the ring stores it: packed to 20 bytes for a
// probe result (the bulk of the ring) and 28 plus its text for the others,
// so the default ring holds minutes of an 8-NIC host (docs/agent.md#flight-recorder).
// Layout, little-endian as the host writes it (the ring never leaves the process):
//   kind(1) nic(1) text_len(2) time_ns(8)                        common header
//   peer(1) flags(1) port(2) value(4)                            every kind
//   value_ns(8) text(text_len)                                   all but probes

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::agent::recorder {

// The same numbers as v1::FlightEvent::Kind.
enum class FlightKind : std::uint8_t {
  kProbe = 1,
  kTrace = 2,
  kAsyncEvent = 3,
  kQpRecovery = 4,
  kTransportReopen = 5,
  kClockFit = 6,
  kCounters = 7,
  kLog = 8,
};
std::string_view FlightKindName(FlightKind kind);

// Probe flags.
inline constexpr std::uint8_t kProbeTimeout = 1;
inline constexpr std::uint8_t kProbeSendFailed = 2;
// Trace flags.
inline constexpr std::uint8_t kTraceChanged = 1;
inline constexpr std::uint8_t kTraceReached = 2;
// QP recovery and reopen flags.
inline constexpr std::uint8_t kAttemptFailed = 1;

// Text longer than this is cut (at a UTF-8 boundary): a ring entry and a
// FlightEvent.text stay small (common/base/upload_limits.h).
inline constexpr std::size_t kMaxEntryText = 512;

struct FlightEntry {
  FlightKind kind = FlightKind::kLog;
  std::uint8_t nic = 0;  // NIC ids past 255 are stored as 255
  std::uint8_t peer_nic = 0;
  std::uint8_t flags = 0;
  std::uint16_t port = 0;
  std::int32_t value = 0;
  std::int64_t time_ns = 0;
  std::int64_t value_ns = 0;  // probes: one-way ns in 32 bits (-1 = none)
  std::string_view text;      // points into the caller's or the ring's bytes
};

inline constexpr std::size_t kHeaderBytes = 12;
inline constexpr std::size_t kProbeBytes = kHeaderBytes + 8;
inline constexpr std::size_t kGenericBytes = kHeaderBytes + 16;

// `text` cut to at most `max` bytes without splitting a UTF-8 sequence.
std::string_view CutUtf8(std::string_view text, std::size_t max);

// The sizes and time below are inline: the ring reads them for every probe
// it stores and every entry it evicts.

// The bytes `entry` takes in the ring (after cutting its text).
inline std::size_t PackedSize(const FlightEntry& entry) {
  if (entry.kind == FlightKind::kProbe) return kProbeBytes;
  return kGenericBytes + CutUtf8(entry.text, kMaxEntryText).size();
}
// Writes `entry` into `out` (PackedSize bytes long).
void Pack(const FlightEntry& entry, std::span<std::uint8_t> out);
// The size of the packed entry at the start of `in`, from its header.
inline std::size_t PackedSizeAt(std::span<const std::uint8_t> in) {
  if (in[0] == static_cast<std::uint8_t>(FlightKind::kProbe)) return kProbeBytes;
  std::uint16_t text = 0;
  std::memcpy(&text, in.data() + 2, sizeof text);
  return kGenericBytes + text;
}
// Reads the packed entry at the start of `in`; its text points into `in`.
FlightEntry Unpack(std::span<const std::uint8_t> in);
// Its time_ns alone (eviction reads nothing else).
inline std::int64_t PackedTimeAt(std::span<const std::uint8_t> in) {
  std::int64_t time = 0;
  std::memcpy(&time, in.data() + 4, sizeof time);
  return time;
}

void ToProto(const FlightEntry& entry, v1::FlightEvent& out);

}  // namespace hostmesh::agent::recorder
