#pragma once

// Is the GID a NIC was configured with one that can carry the probes? RoCEv2
// (routable, UDP port 4791: the only kind with a source port to rotate and
// an IP path to trace) and holding the NIC's own IPv4 address (so replies,
// traces and the analyzer's inventory agree on who sent). Pure: the transport
// reads the table with ibv_query_gid_ex and asks here.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace hostmesh::agent::verbs {

enum class GidType : std::uint8_t { kIb, kRoceV1, kRoceV2 };

struct GidEntry {
  std::uint32_t index = 0;
  std::array<std::uint8_t, 16> raw{};
  GidType type = GidType::kRoceV2;
};

using Ipv4Bytes = std::array<std::uint8_t, 4>;

// Parses dotted IPv4 text; nullopt for anything else.
std::optional<Ipv4Bytes> ParseIpv4(const std::string& text);

// Empty when `entry` is usable for a NIC with address `ip` (any non-empty
// RoCEv2 GID when `ip` is unknown); otherwise why not, for an error message.
std::string GidProblem(const GidEntry& entry, const std::optional<Ipv4Bytes>& ip);

// The index of the RoCEv2 GID holding `ip` (::ffff:a.b.c.d), if the table has one.
std::optional<std::uint32_t> FindRoceV2Gid(std::span<const GidEntry> table, const Ipv4Bytes& ip);

}  // namespace hostmesh::agent::verbs
