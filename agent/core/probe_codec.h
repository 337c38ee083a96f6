#pragma once

// The probe payload: what one NIC sends another, 50 bytes by default.
//
// Layout, all integers big-endian (network byte order):
//   off size field
//     0   4  magic 0x484D5052 ("HMPR"): tells our probes from anything else on the port
//     4   1  version (1)
//     5   1  flags (none defined yet; receivers ignore unknown bits)
//     6   2  length: total payload bytes as sent, so truncation is told from corruption
//     8   2  source NIC id
//    10   2  destination NIC id
//    12   4  CRC-32C of the whole payload with these four bytes zero
//    16   8  agent boot id (random per agent start)
//    24   8  sequence (per source NIC)
//    32   8  send time, ns of CLOCK_REALTIME (two's complement)
//    40  ..  padding up to `length`: byte i = (i * 0x5B + sequence) mod 256
// The first 8 bytes (magic, version, flags, length) keep their place in every
// version, so a receiver can always tell a newer version from a foreign packet.
// The padding changes with the sequence so that over 256 probes every byte
// position carries every value: data-dependent corruption (a marginal SerDes,
// a bad buffer cell) gets a chance to show, and the checksum covers it.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "agent/core/probe_types.h"
#include "common/base/wire_magic.h"

namespace hostmesh::agent {

inline constexpr std::uint8_t kProbeVersion = 1;
inline constexpr std::size_t kProbeHeaderBytes = 40;  // also the smallest payload
inline constexpr std::size_t kDefaultProbePayloadBytes = 50;
inline constexpr std::size_t kMaxProbePayloadBytes = 65507;  // largest UDP/IPv4 payload
// NIC ids travel as 16 bits; no host has more NICs than that.
inline constexpr NicId kMaxWireNicId = 0xFFFF;

struct ProbeHeader {
  std::uint8_t flags = 0;
  NicId src_nic = 0;
  NicId dst_nic = 0;
  std::uint64_t boot_id = 0;
  std::uint64_t sequence = 0;
  std::int64_t send_time_ns = 0;

  friend bool operator==(const ProbeHeader&, const ProbeHeader&) = default;
};

// Each outcome is counted apart by the caller: they point at different causes.
enum class DecodeStatus : std::uint8_t {
  kOk,
  kTruncated,   // shorter than the header or than its own length field
  kForeign,     // wrong magic: not a hostmesh probe (a scanner, another tool)
  kBadVersion,  // our magic, a version we do not speak (mixed agent versions)
  kCorrupt,     // checksum or length mismatch: bits changed on the way
  kWrongBoot,   // intact, but from another agent or an earlier boot of this one
  kTraceProbe,  // our own tracer's last TTL, arrived as the trace meant: not a rejection
};
inline constexpr std::size_t kDecodeStatusCount = 7;
std::string_view DecodeStatusName(DecodeStatus status);

struct DecodeResult {
  DecodeStatus status = DecodeStatus::kTruncated;
  // Filled for kOk and kWrongBoot (so a stray probe can be logged); partial or
  // zero otherwise.
  ProbeHeader header;
};

// Writes a probe filling all of `out` (its size is the payload size). Returns
// false, leaving `out` unspecified, if out.size() is outside
// [kProbeHeaderBytes, kMaxProbePayloadBytes] or a NIC id exceeds kMaxWireNicId.
bool EncodeProbe(const ProbeHeader& header, std::span<std::uint8_t> out);

// Parses and validates a received payload. `expected_boot_id` is this agent's
// boot id: probes carrying another one are reported as kWrongBoot.
DecodeResult DecodeProbe(std::span<const std::uint8_t> packet, std::uint64_t expected_boot_id);

}  // namespace hostmesh::agent
