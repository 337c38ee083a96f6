#include "agent/verbs/gid_check.h"

#include <arpa/inet.h>

#include <algorithm>

namespace hostmesh::agent::verbs {
namespace {

bool IsV4Mapped(const std::array<std::uint8_t, 16>& raw) {
  return std::all_of(raw.begin(), raw.begin() + 10, [](std::uint8_t b) { return b == 0; }) &&
         raw[10] == 0xFF && raw[11] == 0xFF;
}

std::string Text(const std::array<std::uint8_t, 16>& raw) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, raw.data(), text, sizeof(text));
  return text;
}

const char* TypeName(GidType type) {
  switch (type) {
    case GidType::kIb:
      return "InfiniBand";
    case GidType::kRoceV1:
      return "RoCE v1";
    case GidType::kRoceV2:
      return "RoCE v2";
  }
  return "?";
}

}  // namespace

std::optional<Ipv4Bytes> ParseIpv4(const std::string& text) {
  Ipv4Bytes out{};
  if (inet_pton(AF_INET, text.c_str(), out.data()) != 1) return std::nullopt;
  return out;
}

std::string GidProblem(const GidEntry& entry, const std::optional<Ipv4Bytes>& ip) {
  const std::string name = "GID index " + std::to_string(entry.index);
  if (std::all_of(entry.raw.begin(), entry.raw.end(), [](std::uint8_t b) { return b == 0; })) {
    return name + " is empty";
  }
  if (entry.type != GidType::kRoceV2) {
    return name + " (" + Text(entry.raw) + ") is " + TypeName(entry.type) +
           ", not RoCE v2: no UDP source port to rotate and no IP path to trace";
  }
  if (!ip) return {};
  if (!IsV4Mapped(entry.raw) || !std::equal(ip->begin(), ip->end(), entry.raw.begin() + 12)) {
    char want[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, ip->data(), want, sizeof(want));
    return name + " is " + Text(entry.raw) + ", not the NIC's address " + want;
  }
  return {};
}

std::optional<std::uint32_t> FindRoceV2Gid(std::span<const GidEntry> table, const Ipv4Bytes& ip) {
  for (const GidEntry& entry : table) {
    if (GidProblem(entry, ip).empty()) return entry.index;
  }
  return std::nullopt;
}

}  // namespace hostmesh::agent::verbs
