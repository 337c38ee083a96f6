// Fixture bytes below were computed independently (a Python CRC-32C and
// struct.pack), not by the encoder under test.
#include "agent/core/probe_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "agent/core/crc32c.h"

namespace hostmesh::agent {
namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::uint64_t kBoot = 0x0123456789ABCDEFULL;

// src 2, dst 5, sequence 42, send time 1704067200123456789 ns, 50 bytes.
const Bytes kGood50 = {
    0x48, 0x4d, 0x50, 0x52, 0x01, 0x00, 0x00, 0x32,  // magic, version, flags, length
    0x00, 0x02, 0x00, 0x05, 0x47, 0x7e, 0x29, 0xc4,  // src, dst, CRC-32C
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,  // boot id
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a,  // sequence
    0x17, 0xa6, 0x10, 0x17, 0x08, 0xc0, 0xcd, 0x15,  // send time
    0x62, 0xbd, 0x18, 0x73, 0xce, 0x29, 0x84, 0xdf,  // padding
    0x3a, 0x95,
};
const ProbeHeader kGood50Header{0, 2, 5, kBoot, 42, 1704067200123456789LL};

// The smallest probe: src 7, dst 0, sequence 1, flags 0x80, send time -5.
const Bytes kGood40 = {
    0x48, 0x4d, 0x50, 0x52, 0x01, 0x80, 0x00, 0x28,  //
    0x00, 0x07, 0x00, 0x00, 0x71, 0xc3, 0xfa, 0x5a,  //
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,  //
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,  //
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfb,  //
};
const ProbeHeader kGood40Header{0x80, 7, 0, kBoot, 1, -5};

Bytes With(Bytes bytes, std::size_t offset, std::uint8_t value) {
  bytes.at(offset) = value;
  return bytes;
}
Bytes Flip(Bytes bytes, std::size_t offset, std::uint8_t mask) {
  bytes.at(offset) ^= mask;
  return bytes;
}
Bytes Prefix(const Bytes& bytes, std::size_t n) {
  return Bytes(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
}
Bytes Append(Bytes bytes, std::uint8_t value) {
  bytes.push_back(value);
  return bytes;
}

TEST(agent_codec, Crc32cMatchesTheStandardCheckValue) {
  const std::string check = "123456789";
  const Bytes bytes(check.begin(), check.end());
  EXPECT_EQ(Crc32c(bytes), 0xE3069283U);
  // Chaining equals one pass.
  EXPECT_EQ(Crc32c(Bytes(bytes.begin() + 4, bytes.end()), Crc32c(Prefix(bytes, 4))), 0xE3069283U);
}

TEST(agent_codec, Crc32cInstructionAndTableAgreeOnEveryLengthAndOffset) {
  Bytes bytes(100);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 37 + 11);
  const std::string check = "123456789";
  EXPECT_EQ(Crc32cTable(Bytes(check.begin(), check.end())), 0xE3069283U);
  // Every length crosses the 8-byte steps of the instruction path at another
  // point; an odd start leaves the words unaligned.
  for (std::size_t start = 0; start < 9; ++start) {
    for (std::size_t length = 0; start + length <= bytes.size(); ++length) {
      const std::span<const std::uint8_t> part(bytes.data() + start, length);
      ASSERT_EQ(Crc32c(part, 0x1234U), Crc32cTable(part, 0x1234U))
          << "start " << start << " length " << length;
    }
  }
}

TEST(agent_codec, Crc32cZeroedEqualsTheCrcOfACopyWithTheFieldZeroed) {
  Bytes bytes(60);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 91 + 7);
  // Every offset: the field starts inside, at and across the instruction's words.
  for (std::size_t offset = 0; offset + 4 <= bytes.size(); ++offset) {
    Bytes zeroed = bytes;
    std::fill_n(zeroed.begin() + static_cast<std::ptrdiff_t>(offset), 4, 0);
    ASSERT_EQ(Crc32cZeroed(bytes, offset), Crc32c(zeroed)) << "offset " << offset;
    ASSERT_EQ(Crc32cZeroed(bytes, offset), Crc32cTable(zeroed)) << "offset " << offset;
  }
}

TEST(agent_codec, PaddingOfEveryLengthFollowsItsRule) {
  // Written eight bytes at a time: every length ends the words at another point.
  for (std::size_t size = kProbeHeaderBytes; size < kProbeHeaderBytes + 40; ++size) {
    Bytes out(size);
    ProbeHeader header = kGood50Header;
    header.sequence = 0xABCDEF0123ULL + size;
    ASSERT_TRUE(EncodeProbe(header, out));
    for (std::size_t i = kProbeHeaderBytes; i < size; ++i) {
      ASSERT_EQ(out[i], static_cast<std::uint8_t>(i * 0x5BU + header.sequence))
          << "size " << size << " byte " << i;
    }
    EXPECT_EQ(DecodeProbe(out, header.boot_id).status, DecodeStatus::kOk);
  }
}

TEST(agent_codec, EncodeProducesTheFixtureBytes) {
  Bytes out(50);
  ASSERT_TRUE(EncodeProbe(kGood50Header, out));
  EXPECT_EQ(out, kGood50);
  Bytes small(40);
  ASSERT_TRUE(EncodeProbe(kGood40Header, small));
  EXPECT_EQ(small, kGood40);
}

struct Fixture {
  std::string name;
  Bytes bytes;
  DecodeStatus status;
};

TEST(agent_codec, DecodeFixtureTable) {
  const std::vector<Fixture> table = {
      {"good 50 bytes", kGood50, DecodeStatus::kOk},
      {"good 40 bytes, unknown flag ignored", kGood40, DecodeStatus::kOk},
      {"empty", {}, DecodeStatus::kTruncated},
      {"three bytes of magic", Prefix(kGood50, 3), DecodeStatus::kTruncated},
      {"magic only", Prefix(kGood50, 4), DecodeStatus::kTruncated},
      {"stable prefix only", Prefix(kGood50, 8), DecodeStatus::kTruncated},
      {"header cut at 39", Prefix(kGood50, 39), DecodeStatus::kTruncated},
      {"cut at 45 of 50", Prefix(kGood50, 45), DecodeStatus::kTruncated},
      {"http request", {'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P'}, DecodeStatus::kForeign},
      {"short foreign", {0x00, 0x01, 0x02, 0x03}, DecodeStatus::kForeign},
      {"magic bit flipped", Flip(kGood50, 0, 0x01), DecodeStatus::kForeign},
      {"version 2", With(kGood50, 4, 2), DecodeStatus::kBadVersion},
      {"version 0, short", With(Prefix(kGood50, 10), 4, 0), DecodeStatus::kBadVersion},
      {"sequence bit flipped", Flip(kGood50, 31, 0x01), DecodeStatus::kCorrupt},
      {"boot id bit flipped", Flip(kGood50, 20, 0x40), DecodeStatus::kCorrupt},
      {"padding bit flipped", Flip(kGood50, 49, 0x80), DecodeStatus::kCorrupt},
      {"checksum byte changed", Flip(kGood50, 12, 0xFF), DecodeStatus::kCorrupt},
      {"flags changed", With(kGood50, 5, 0x01), DecodeStatus::kCorrupt},
      {"length below header size", With(kGood50, 7, 0x20), DecodeStatus::kCorrupt},
      {"trailing byte", Append(kGood50, 0x00), DecodeStatus::kCorrupt},
      {"length says 60", With(kGood50, 7, 60), DecodeStatus::kTruncated},
      // The tracer's last TTL on the probe's own 5-tuple: 16-byte tag, "HMTR".
      {"traceroute tag",
       {'H', 'M', 'T', 'R', 0, 3, 0, 0, 0, 1, 0x12, 0x34, 0, 0, 0, 0},
       DecodeStatus::kTraceProbe},
  };
  for (const Fixture& fixture : table) {
    SCOPED_TRACE(fixture.name);
    const DecodeResult result = DecodeProbe(fixture.bytes, kBoot);
    EXPECT_EQ(DecodeStatusName(result.status), DecodeStatusName(fixture.status));
  }
}

TEST(agent_codec, DecodeReturnsTheHeader) {
  DecodeResult result = DecodeProbe(kGood50, kBoot);
  ASSERT_EQ(result.status, DecodeStatus::kOk);
  EXPECT_EQ(result.header, kGood50Header);
  result = DecodeProbe(kGood40, kBoot);
  ASSERT_EQ(result.status, DecodeStatus::kOk);
  EXPECT_EQ(result.header, kGood40Header);
}

TEST(agent_codec, ProbeOfAnotherBootIsToldApartAndStillParsed) {
  const DecodeResult result = DecodeProbe(kGood50, kBoot + 1);
  EXPECT_EQ(result.status, DecodeStatus::kWrongBoot);
  EXPECT_EQ(result.header, kGood50Header);  // so the stray can be logged
}

TEST(agent_codec, EverySingleBitFlipIsRejected) {
  for (std::size_t byte = 0; byte < kGood50.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      const DecodeResult result =
          DecodeProbe(Flip(kGood50, byte, static_cast<std::uint8_t>(1U << bit)), kBoot);
      EXPECT_NE(result.status, DecodeStatus::kOk) << "byte " << byte << " bit " << bit;
      EXPECT_NE(result.status, DecodeStatus::kWrongBoot) << "byte " << byte << " bit " << bit;
    }
  }
}

TEST(agent_codec, RoundTripsEverySizeAndExtremeValues) {
  const std::vector<ProbeHeader> headers = {
      {0, 0, 0, 0, 0, 0},
      {0xFF, kMaxWireNicId, kMaxWireNicId, ~0ULL, ~0ULL, INT64_MIN},
      {0x01, 3, 4, 77, 1ULL << 40, INT64_MAX},
  };
  for (const ProbeHeader& header : headers) {
    for (std::size_t size = kProbeHeaderBytes; size <= 300; ++size) {
      Bytes out(size);
      ASSERT_TRUE(EncodeProbe(header, out));
      const DecodeResult result = DecodeProbe(out, header.boot_id);
      ASSERT_EQ(result.status, DecodeStatus::kOk) << size;
      EXPECT_EQ(result.header, header);
    }
  }
  Bytes largest(kMaxProbePayloadBytes);
  ASSERT_TRUE(EncodeProbe(kGood50Header, largest));
  EXPECT_EQ(DecodeProbe(largest, kBoot).status, DecodeStatus::kOk);
}

TEST(agent_codec, PaddingVariesWithTheSequence) {
  // Over 256 consecutive probes every padding byte position takes every value.
  std::vector<std::set<std::uint8_t>> seen(10);
  ProbeHeader header = kGood50Header;
  for (std::uint64_t seq = 0; seq < 256; ++seq) {
    header.sequence = seq;
    Bytes out(50);
    ASSERT_TRUE(EncodeProbe(header, out));
    for (std::size_t i = 0; i < 10; ++i) seen[i].insert(out[40 + i]);
  }
  for (const auto& values : seen) EXPECT_EQ(values.size(), 256U);
}

TEST(agent_codec, EncodeRefusesWhatItCannotRepresent) {
  Bytes too_small(kProbeHeaderBytes - 1);
  EXPECT_FALSE(EncodeProbe(kGood50Header, too_small));
  Bytes too_big(kMaxProbePayloadBytes + 1);
  EXPECT_FALSE(EncodeProbe(kGood50Header, too_big));
  Bytes out(50);
  ProbeHeader header = kGood50Header;
  header.src_nic = kMaxWireNicId + 1;
  EXPECT_FALSE(EncodeProbe(header, out));
  header = kGood50Header;
  header.dst_nic = kMaxWireNicId + 1;
  EXPECT_FALSE(EncodeProbe(header, out));
}

TEST(agent_codec, StatusNamesAreDistinct) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kDecodeStatusCount; ++i) {
    names.insert(DecodeStatusName(static_cast<DecodeStatus>(i)));
  }
  EXPECT_EQ(names.size(), kDecodeStatusCount);
}

}  // namespace
}  // namespace hostmesh::agent
