#include "agent/core/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

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

// Both take and return the register value (no pre/post inversion).
std::uint32_t UpdateTable(std::span<const std::uint8_t> data, std::uint32_t crc) {
  for (const std::uint8_t byte : data) crc = kTable[(crc ^ byte) & 0xFFU] ^ (crc >> 8);
  return crc;
}

// Bytes [begin, end) of the data read as zero (none when begin == end).
struct ZeroWindow {
  std::size_t begin = 0;
  std::size_t end = 0;
};

std::uint32_t UpdateTableZeroing(std::span<const std::uint8_t> data, ZeroWindow zero,
                                 std::uint32_t crc) {
  for (std::size_t i = 0; i < data.size(); ++i) {
    const std::uint8_t byte = i >= zero.begin && i < zero.end ? 0 : data[i];
    crc = kTable[(crc ^ byte) & 0xFFU] ^ (crc >> 8);
  }
  return crc;
}

#if defined(__x86_64__)
// The SSE4.2 CRC32 instruction computes exactly this CRC, 8 bytes at a time.
// The zero window costs a compare per word: the receiver checks a probe's
// checksum with its checksum field read as zero in one pass, no copy.
__attribute__((target("sse4.2"))) std::uint32_t UpdateSse42(std::span<const std::uint8_t> data,
                                                            ZeroWindow zero, std::uint32_t crc) {
  const std::uint8_t* p = data.data();
  const std::size_t size = data.size();
  std::size_t at = 0;
  std::uint64_t wide = crc;
  for (; size - at >= 8; at += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, p + at, sizeof(word));
    if (at < zero.end && at + 8 > zero.begin) {
      for (std::size_t i = 0; i < 8; ++i) {
        if (at + i >= zero.begin && at + i < zero.end) word &= ~(std::uint64_t{0xFF} << (8 * i));
      }
    }
    wide = _mm_crc32_u64(wide, word);
  }
  auto narrow = static_cast<std::uint32_t>(wide);
  if (at < zero.end && size > zero.begin) {
    // The window reaches into the tail: a byte at a time (rare).
    for (; at < size; ++at) {
      narrow = _mm_crc32_u8(narrow, at >= zero.begin && at < zero.end ? 0 : p[at]);
    }
    return narrow;
  }
  // The tail in at most three steps (4, 2, 1 bytes), not one per byte.
  std::size_t n = size - at;
  p += at;
  if (n >= 4) {
    std::uint32_t word = 0;
    std::memcpy(&word, p, sizeof(word));
    narrow = _mm_crc32_u32(narrow, word);
    p += 4;
    n -= 4;
  }
  if (n >= 2) {
    std::uint16_t half = 0;
    std::memcpy(&half, p, sizeof(half));
    narrow = _mm_crc32_u16(narrow, half);
    p += 2;
    n -= 2;
  }
  if (n > 0) narrow = _mm_crc32_u8(narrow, *p);
  return narrow;
}

const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

std::uint32_t Crc32c(std::span<const std::uint8_t> data, std::uint32_t crc) {
#if defined(__x86_64__)
  if (kHaveSse42) return ~UpdateSse42(data, {}, ~crc);
#endif
  return ~UpdateTable(data, ~crc);
}

std::uint32_t Crc32cZeroing(std::span<const std::uint8_t> data, std::size_t zero_at,
                            std::size_t zero_bytes, std::uint32_t crc) {
  const ZeroWindow zero{zero_at, zero_at + zero_bytes};
#if defined(__x86_64__)
  if (kHaveSse42) return ~UpdateSse42(data, zero, ~crc);
#endif
  return ~UpdateTableZeroing(data, zero, ~crc);
}

std::uint32_t Crc32cTable(std::span<const std::uint8_t> data, std::uint32_t crc) {
  return ~UpdateTable(data, ~crc);
}

}  // namespace hostmesh::agent
