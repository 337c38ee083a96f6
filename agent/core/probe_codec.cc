#include "agent/core/probe_codec.h"

#include <array>
#include <bit>
#include <cstring>

#include "agent/core/crc32c.h"

namespace hostmesh::agent {
namespace {

constexpr std::size_t kMagicOffset = 0;
constexpr std::size_t kVersionOffset = 4;
constexpr std::size_t kFlagsOffset = 5;
constexpr std::size_t kLengthOffset = 6;
constexpr std::size_t kSrcOffset = 8;
constexpr std::size_t kDstOffset = 10;
constexpr std::size_t kChecksumOffset = 12;
constexpr std::size_t kBootOffset = 16;
constexpr std::size_t kSequenceOffset = 24;
constexpr std::size_t kSendTimeOffset = 32;
// Magic, version, flags and length: the part every version keeps.
constexpr std::size_t kStablePrefixBytes = 8;

// Big-endian fields by one copy and a byte swap (a byte loop per field was
// most of the codec's instructions: every probe is encoded and decoded once).
template <typename T>
T ByteSwap(T value) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
  if constexpr (sizeof(T) == 2) {
    return static_cast<T>(__builtin_bswap16(value));
  } else if constexpr (sizeof(T) == 4) {
    return static_cast<T>(__builtin_bswap32(value));
  } else {
    return static_cast<T>(__builtin_bswap64(value));
  }
}

template <typename T>
void PutBig(std::span<std::uint8_t> out, std::size_t offset, T value) {
  if constexpr (std::endian::native == std::endian::little && sizeof(T) > 1) {
    value = ByteSwap(value);
  }
  std::memcpy(out.data() + offset, &value, sizeof(T));
}

template <typename T>
T GetBig(std::span<const std::uint8_t> in, std::size_t offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(T));
  if constexpr (std::endian::native == std::endian::little && sizeof(T) > 1) {
    value = ByteSwap(value);
  }
  return value;
}

std::uint8_t PaddingByte(std::size_t offset, std::uint64_t sequence) {
  return static_cast<std::uint8_t>(offset * 0x5BU + sequence);
}

// PaddingByte for offsets [from, out.size()), eight bytes at a time on a
// little-endian host: byte k of a word is its first byte plus k * 0x5B,
// added lane by lane without carries between bytes.
void FillPadding(std::span<std::uint8_t> out, std::size_t from, std::uint64_t sequence) {
  std::size_t i = from;
  if constexpr (std::endian::native == std::endian::little) {
    constexpr std::uint64_t kLow7 = 0x7F7F7F7F7F7F7F7FULL;
    constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
    constexpr std::uint64_t kSteps = [] {
      std::uint64_t w = 0;
      for (unsigned k = 0; k < 8; ++k) w |= std::uint64_t{(k * 0x5BU) & 0xFFU} << (8 * k);
      return w;
    }();
    for (; i + 8 <= out.size(); i += 8) {
      const std::uint64_t first = PaddingByte(i, sequence) * 0x0101010101010101ULL;
      const std::uint64_t word = ((first & kLow7) + (kSteps & kLow7)) ^ ((first ^ kSteps) & kHigh);
      std::memcpy(out.data() + i, &word, sizeof(word));
    }
  }
  for (; i < out.size(); ++i) out[i] = PaddingByte(i, sequence);
}

// CRC over the payload as if its checksum field were zero, without copying it.
std::uint32_t PayloadChecksum(std::span<const std::uint8_t> payload) {
  return Crc32cZeroed(payload, kChecksumOffset);
}

}  // namespace

std::string_view DecodeStatusName(DecodeStatus status) {
  switch (status) {
    case DecodeStatus::kOk:
      return "ok";
    case DecodeStatus::kTruncated:
      return "truncated";
    case DecodeStatus::kForeign:
      return "foreign";
    case DecodeStatus::kBadVersion:
      return "bad_version";
    case DecodeStatus::kCorrupt:
      return "corrupt";
    case DecodeStatus::kWrongBoot:
      return "wrong_boot";
    case DecodeStatus::kTraceProbe:
      return "trace_probe";
  }
  return "unknown";
}

bool EncodeProbe(const ProbeHeader& header, std::span<std::uint8_t> out) {
  if (out.size() < kProbeHeaderBytes || out.size() > kMaxProbePayloadBytes) return false;
  if (header.src_nic > kMaxWireNicId || header.dst_nic > kMaxWireNicId) return false;
  PutBig<std::uint32_t>(out, kMagicOffset, kProbeMagic);
  out[kVersionOffset] = kProbeVersion;
  out[kFlagsOffset] = header.flags;
  PutBig<std::uint16_t>(out, kLengthOffset, static_cast<std::uint16_t>(out.size()));
  PutBig<std::uint16_t>(out, kSrcOffset, static_cast<std::uint16_t>(header.src_nic));
  PutBig<std::uint16_t>(out, kDstOffset, static_cast<std::uint16_t>(header.dst_nic));
  PutBig<std::uint32_t>(out, kChecksumOffset, 0);
  PutBig<std::uint64_t>(out, kBootOffset, header.boot_id);
  PutBig<std::uint64_t>(out, kSequenceOffset, header.sequence);
  PutBig<std::uint64_t>(out, kSendTimeOffset, static_cast<std::uint64_t>(header.send_time_ns));
  FillPadding(out, kProbeHeaderBytes, header.sequence);
  // The checksum field is zero here: one pass over the payload, where a
  // receiver's check (PayloadChecksum) takes three.
  PutBig<std::uint32_t>(out, kChecksumOffset, Crc32c(out));
  return true;
}

DecodeResult DecodeProbe(std::span<const std::uint8_t> packet, std::uint64_t expected_boot_id) {
  DecodeResult result;
  // A packet too short to hold the magic cannot be told foreign; call it truncated.
  if (packet.size() >= 4 && GetBig<std::uint32_t>(packet, kMagicOffset) != kProbeMagic) {
    const bool trace = GetBig<std::uint32_t>(packet, kMagicOffset) == kTraceMagic;
    result.status = trace ? DecodeStatus::kTraceProbe : DecodeStatus::kForeign;
    return result;
  }
  if (packet.size() < kStablePrefixBytes) {
    result.status = DecodeStatus::kTruncated;
    return result;
  }
  // Checked before the length: another version may lay out the rest differently.
  if (packet[kVersionOffset] != kProbeVersion) {
    result.status = DecodeStatus::kBadVersion;
    return result;
  }
  const std::size_t length = GetBig<std::uint16_t>(packet, kLengthOffset);
  if (packet.size() < kProbeHeaderBytes || packet.size() < length) {
    result.status = DecodeStatus::kTruncated;
    return result;
  }
  // A length field below the header size or bytes beyond it can only come from
  // damage: the sender writes exactly `length` bytes.
  if (length < kProbeHeaderBytes || packet.size() > length ||
      GetBig<std::uint32_t>(packet, kChecksumOffset) != PayloadChecksum(packet)) {
    result.status = DecodeStatus::kCorrupt;
    return result;
  }
  ProbeHeader& header = result.header;
  header.flags = packet[kFlagsOffset];
  header.src_nic = GetBig<std::uint16_t>(packet, kSrcOffset);
  header.dst_nic = GetBig<std::uint16_t>(packet, kDstOffset);
  header.boot_id = GetBig<std::uint64_t>(packet, kBootOffset);
  header.sequence = GetBig<std::uint64_t>(packet, kSequenceOffset);
  header.send_time_ns = static_cast<std::int64_t>(GetBig<std::uint64_t>(packet, kSendTimeOffset));
  result.status = header.boot_id == expected_boot_id ? DecodeStatus::kOk : DecodeStatus::kWrongBoot;
  return result;
}

}  // namespace hostmesh::agent
