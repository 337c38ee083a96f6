#include "agent/core/crc32c.h"

#include <array>

namespace hostmesh::agent {
namespace {

constexpr std::array<std::uint32_t, 256> MakeTable() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1U) != 0 ? (c >> 1) ^ 0x82F63B78U : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr std::array<std::uint32_t, 256> kTable = MakeTable();

}  // namespace

std::uint32_t Crc32c(std::span<const std::uint8_t> data, std::uint32_t crc) {
  crc = ~crc;
  for (const std::uint8_t byte : data) crc = kTable[(crc ^ byte) & 0xFFU] ^ (crc >> 8);
  return ~crc;
}

}  // namespace hostmesh::agent
