// The compact result chunk: lossless for every value, smaller than protobuf
// for realistic results, the old delimited form still read, damage detected.
#include "analyzer/store/result_codec.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

#include "analyzer/store/chunk_codec.h"

namespace hostmesh::analyzer::store {
namespace {

constexpr std::int64_t kT0 = 1'704'067'200'000'000'000;

// Results like a real agent's: 8 NICs, sequences per NIC, kernel stamps
// microseconds apart, a timeout now and then.
std::vector<v1::ProbeResult> Realistic(int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<v1::ProbeResult> out;
  std::uint64_t seq[8] = {};
  std::int64_t t = kT0;
  for (int i = 0; i < count; ++i) {
    v1::ProbeResult r;
    const auto src = static_cast<std::uint32_t>(rng() % 8);
    r.set_src_nic(src);
    r.set_dst_nic((src + 1 + static_cast<std::uint32_t>(rng() % 7)) % 8);
    r.set_src_port(49152 + static_cast<std::uint32_t>(rng() % 16384));
    r.set_dst_port(4791);
    r.set_sequence(++seq[src] + 1'000'000);
    t += 10'000'000 + static_cast<std::int64_t>(rng() % 5'000'000);
    r.set_send_time_ns(t);
    r.set_app_send_ns(t + static_cast<std::int64_t>(rng() % 20'000));
    r.set_nic_send_ns(r.app_send_ns() + static_cast<std::int64_t>(rng() % 15'000));
    r.set_send_timestamp_source(v1::TIMESTAMP_SOURCE_KERNEL);
    r.set_payload_bytes(50);
    if (rng() % 100 == 0) {
      r.set_timeout(true);
    } else {
      r.set_nic_recv_ns(r.nic_send_ns() + 8'000 + static_cast<std::int64_t>(rng() % 20'000));
      r.set_app_recv_ns(r.nic_recv_ns() + static_cast<std::int64_t>(rng() % 60'000));
      r.set_recv_timestamp_source(v1::TIMESTAMP_SOURCE_KERNEL);
    }
    out.push_back(r);
  }
  return out;
}

std::string Encode(const std::vector<v1::ProbeResult>& results) {
  std::vector<const v1::ProbeResult*> pointers;
  for (const auto& r : results) pointers.push_back(&r);
  std::string chunk;
  EncodeResultChunk(pointers, chunk);
  return chunk;
}

void ExpectRoundTrip(const std::vector<v1::ProbeResult>& results, bool compact) {
  const std::string chunk = Encode(results);
  ResultChunkReader reader(chunk);
  EXPECT_EQ(reader.compact(), compact);
  v1::ProbeResult r;
  for (const auto& want : results) {
    ASSERT_TRUE(reader.Next(r)) << "ended early";
    EXPECT_EQ(r.SerializeAsString(), want.SerializeAsString()) << r.DebugString();
  }
  EXPECT_FALSE(reader.Next(r));
  EXPECT_FALSE(reader.corrupt());
}

TEST(ResultCodec, RealisticResultsRoundTripInAThirdOfTheBytes) {
  const auto results = Realistic(80, 1);
  ExpectRoundTrip(results, true);
  std::string delimited;
  for (const auto& r : results) AppendDelimited(delimited, r);
  const std::size_t compact = Encode(results).size();
  EXPECT_LT(compact * 3, delimited.size()) << compact << " vs " << delimited.size();
  EXPECT_LT(compact, 80u * 26);
}

TEST(ResultCodec, EveryValueRoundTrips) {
  // Extremes, zeros, time going backwards, sequences restarting, any port,
  // payload and error: deltas wrap but never lose a bit.
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  std::vector<v1::ProbeResult> results(6);
  results[0].set_send_time_ns(kMax);
  results[0].set_app_send_ns(kMin);
  results[0].set_nic_send_ns(kMax);
  results[0].set_nic_recv_ns(1);
  results[0].set_app_recv_ns(kMin);
  results[0].set_sequence(std::numeric_limits<std::uint64_t>::max());
  results[0].set_timestamp_error_ns(-5);
  results[1].set_send_time_ns(kMin);
  results[1].set_sequence(0);
  results[1].set_src_port(0xffff);
  results[1].set_dst_port(0xffffffffu);
  results[1].set_payload_bytes(0xffffffffu);
  results[1].set_timeout(true);
  results[2].set_src_nic(31);
  results[2].set_dst_nic(31);
  results[2].set_send_timestamp_source(v1::TIMESTAMP_SOURCE_HARDWARE);
  results[2].set_recv_timestamp_source(v1::TIMESTAMP_SOURCE_USER);
  results[2].set_nic_recv_ns(kT0);  // t3 without t1, t2
  results[3].set_send_time_ns(kT0);
  results[3].set_app_recv_ns(kT0 - 1);  // t4 alone, before the send
  results[4].set_dst_port(0);
  results[4].set_sequence(7);
  results[4].set_send_failed(true);
  results[5] = results[4];  // the same result twice
  ExpectRoundTrip(results, true);
}

TEST(ResultCodec, ResultsTheCompactFormCannotHoldAreStoredAsProtobuf) {
  for (int variant = 0; variant < 4; ++variant) {
    auto results = Realistic(10, 2);
    v1::ProbeResult& odd = results[5];
    switch (variant) {
      case 0:
        odd.set_src_nic(32);
        break;
      case 1:
        odd.set_src_port(70'000);
        break;
      case 2:
        odd.set_recv_timestamp_source(static_cast<v1::TimestampSource>(9));
        break;
      case 3:  // a field from a newer agent
        odd.GetReflection()->MutableUnknownFields(&odd)->AddVarint(99, 1);
        break;
    }
    SCOPED_TRACE(variant);
    ExpectRoundTrip(results, false);
  }
}

// Found by fuzz/store_result_codec_fuzz.cc: an empty first result (every
// field at its default) is the byte 0x00 in the delimited form, and with a
// 2-byte result after it the chunk began 0x00 0x02 and read as compact.
TEST(ResultCodec, ADelimitedChunkNeverStartsLikeACompactOne) {
  v1::ProbeResult empty;
  v1::ProbeResult odd;
  odd.set_src_nic(40);  // past the compact form; serializes to 2 bytes
  ASSERT_EQ(odd.ByteSizeLong(), 2u);
  ExpectRoundTrip({empty, odd}, false);
  ExpectRoundTrip({empty, empty, odd}, false);
}

TEST(ResultCodec, ChunksStoredBeforeTheCompactFormAreRead) {
  const auto results = Realistic(5, 3);
  std::string delimited;
  for (const auto& r : results) AppendDelimited(delimited, r);
  ResultChunkReader reader(delimited);
  EXPECT_FALSE(reader.compact());
  v1::ProbeResult r;
  for (const auto& want : results) {
    ASSERT_TRUE(reader.Next(r));
    EXPECT_EQ(r.SerializeAsString(), want.SerializeAsString());
  }
  EXPECT_FALSE(reader.Next(r));
  EXPECT_FALSE(reader.corrupt());
}

TEST(ResultCodec, DamageIsReportedNotSkipped) {
  const std::string chunk = Encode(Realistic(20, 4));
  v1::ProbeResult r;
  auto read_all = [&](std::string_view bytes) {
    ResultChunkReader reader(bytes);
    int n = 0;
    while (reader.Next(r)) ++n;
    return std::make_pair(n, reader.corrupt());
  };
  EXPECT_EQ(read_all(chunk), std::make_pair(20, false));
  const auto cut = read_all(std::string_view(chunk).substr(0, chunk.size() - 3));
  EXPECT_LT(cut.first, 20);
  EXPECT_TRUE(cut.second) << "a cut-off chunk";
  EXPECT_EQ(read_all(chunk + "x"), std::make_pair(20, true)) << "bytes after the last result";
  std::string unknown_flag = chunk;
  unknown_flag[3] = static_cast<char>(0x80);  // the first flags varint grows a bit 12
  unknown_flag.insert(4, 1, static_cast<char>(0x20));
  EXPECT_TRUE(read_all(unknown_flag).second);
}

}  // namespace
}  // namespace hostmesh::analyzer::store
