#pragma once

// Base-128 varints and zigzag, as protobuf writes them, for the hand-packed
// forms both sides read: the agent's packed results (packed_results.h) and
// the analyzer's stored result chunks (analyzer/store/result_codec.cc). Pure
// and inline: both run once per result.

#include <cstdint>

namespace hostmesh::wire {

inline std::uint64_t ZigZag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}

inline std::int64_t UnZigZag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// Two's-complement difference and sum: the sum undoes the difference for
// every pair of int64 values.
inline std::int64_t WrappingDifference(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
inline std::int64_t WrappingSum(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

// At most 10 bytes.
inline constexpr int kMaxVarintBytes = 10;

// Writes `v` at `out` as a varint; returns its end. Most values the callers
// write take one to four bytes: those without a loop.
inline char* PutVarint(std::uint64_t v, char* out) {
  if (v < (std::uint64_t{1} << 7)) {
    out[0] = static_cast<char>(v);
    return out + 1;
  }
  if (v < (std::uint64_t{1} << 14)) {
    out[0] = static_cast<char>(v | 0x80);
    out[1] = static_cast<char>(v >> 7);
    return out + 2;
  }
  if (v < (std::uint64_t{1} << 21)) {
    out[0] = static_cast<char>(v | 0x80);
    out[1] = static_cast<char>((v >> 7) | 0x80);
    out[2] = static_cast<char>(v >> 14);
    return out + 3;
  }
  if (v < (std::uint64_t{1} << 28)) {
    out[0] = static_cast<char>(v | 0x80);
    out[1] = static_cast<char>((v >> 7) | 0x80);
    out[2] = static_cast<char>((v >> 14) | 0x80);
    out[3] = static_cast<char>(v >> 21);
    return out + 4;
  }
  while (v >= 0x80) {
    *out++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v);
  return out;
}

enum class VarintRead { kOk, kTruncated, kTooLong };

// Reads one varint from [p, end) into `out`, advancing `p`. kTruncated: the
// bytes end inside it; kTooLong: it runs past 10 bytes or 64 bits.
inline VarintRead GetVarint(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& out) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) return VarintRead::kTruncated;
    const std::uint8_t byte = *p++;
    if (shift == 63 && byte > 1) return VarintRead::kTooLong;
    v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) {
      out = v;
      return VarintRead::kOk;
    }
  }
  return VarintRead::kTooLong;
}

}  // namespace hostmesh::wire
