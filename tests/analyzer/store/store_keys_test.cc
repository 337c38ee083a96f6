// Key encoding: bytewise order must be time order, and keys must round-trip.
#include "analyzer/store/store_keys.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "analyzer/store/chunk_codec.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::analyzer::store {
namespace {

TEST(store_keys, TimeKeysSortLikeTimesIncludingNegatives) {
  const std::int64_t times[] = {INT64_MIN, -10'000'000'000,           -1,       0,
                                1,         1'704'067'200'000'000'000, INT64_MAX};
  for (std::size_t i = 1; i < std::size(times); ++i) {
    EXPECT_LT(TimeKey(times[i - 1]), TimeKey(times[i])) << times[i - 1] << " vs " << times[i];
    EXPECT_EQ(ReadTime(TimeKey(times[i])), times[i]);
  }
}

TEST(store_keys, BucketStartFloorsToTenSeconds) {
  EXPECT_EQ(BucketStart(0), 0);
  EXPECT_EQ(BucketStart(9'999'999'999), 0);
  EXPECT_EQ(BucketStart(10'000'000'000), 10'000'000'000);
  EXPECT_EQ(BucketStart(-1), -10'000'000'000);
}

// Found by fuzz/store_keys_fuzz.cc: the floor of a time in the first seconds
// after INT64_MIN is below it (signed overflow); such a key time, read back
// from a damaged key, gets the lowest bucket there is.
TEST(store_keys, BucketStartOfTheLowestTimesIsInt64Min) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const std::string key("\x00\x00\x00\x00\x00\x3c\x05\x00", 8);
  const std::int64_t t = ReadTime(key);
  EXPECT_EQ(t, kMin + 0x3c0500);
  EXPECT_EQ(BucketStart(t), kMin);
  EXPECT_EQ(BucketStart(kMin), kMin);
  const std::int64_t lowest_whole = (kMin / 10'000'000'000) * 10'000'000'000;
  EXPECT_EQ(BucketStart(lowest_whole - 1), kMin);
  EXPECT_EQ(BucketStart(lowest_whole), lowest_whole);
}

TEST(store_keys, ChunkKeyRoundTripsAndLeadsWithTime) {
  const std::string key = ChunkKey(20'000'000'000, "h017", 0xB007, 42);
  const auto parts = ParseChunkKey(key);
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->bucket_ns, 20'000'000'000);
  EXPECT_EQ(parts->agent_id, "h017");
  EXPECT_EQ(parts->boot_id, 0xB007u);
  EXPECT_EQ(parts->batch_seq, 42u);
  // An earlier bucket sorts first whatever the agent: scans are by time.
  EXPECT_LT(ChunkKey(10'000'000'000, "zzz", 9, 9), ChunkKey(20'000'000'000, "aaa", 1, 1));
  EXPECT_FALSE(ParseChunkKey(key.substr(0, key.size() - 1)));
}

TEST(store_keys, LedgerKeysOfOneBootAreContiguousAndOrderedBySeq) {
  const std::string prefix = LedgerPrefix("h1", 7);
  EXPECT_EQ(LedgerKey("h1", 7, 3).substr(0, prefix.size()), prefix);
  EXPECT_LT(LedgerKey("h1", 7, 2), LedgerKey("h1", 7, 10));
  EXPECT_LT(LedgerKey("h1", 7, UINT64_MAX), LedgerKey("h1", 8, 0));
  // The length prefix keeps "h1" and "h10" apart.
  EXPECT_NE(LedgerKey("h1", 7, 3).substr(0, 4), LedgerKey("h10", 7, 3).substr(0, 4));
  EXPECT_EQ(LedgerKeySeq(LedgerKey("h1", 7, 12345)), 12345u);
}

TEST(store_keys, DelimitedChunkRoundTrips) {
  std::string chunk;
  for (std::uint32_t i = 0; i < 3; ++i) {
    v1::ProbeResult r;
    r.set_src_nic(i);
    r.set_sequence(1000 + i);
    AppendDelimited(chunk, r);
  }
  std::string_view in = chunk;
  v1::ProbeResult r;
  for (std::uint32_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(ReadDelimited(in, r));
    EXPECT_EQ(r.src_nic(), i);
    EXPECT_EQ(r.sequence(), 1000 + i);
  }
  EXPECT_TRUE(in.empty());
  std::string_view truncated(chunk.data(), chunk.size() - 1);
  ASSERT_TRUE(ReadDelimited(truncated, r));
  ASSERT_TRUE(ReadDelimited(truncated, r));
  EXPECT_FALSE(ReadDelimited(truncated, r)) << "a cut-off message is malformed, not skipped";
}

}  // namespace
}  // namespace hostmesh::analyzer::store
