// The ring's bounds, eviction order, range slices and what it says of the
// events it no longer holds.
#include "agent/recorder/flight_ring.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hostmesh::agent::recorder {
namespace {

FlightEntry Probe(std::int64_t t, std::uint8_t nic = 0) {
  FlightEntry e;
  e.kind = FlightKind::kProbe;
  e.time_ns = t;
  e.nic = nic;
  e.peer_nic = 1;
  e.port = 49152;
  e.value_ns = 5000;
  return e;
}

FlightEntry Log(std::int64_t t, std::string_view text) {
  FlightEntry e;
  e.kind = FlightKind::kLog;
  e.time_ns = t;
  e.text = text;
  return e;
}

std::vector<FlightEntry> All(const FlightRing& ring, std::vector<std::string>* texts = nullptr) {
  std::vector<FlightEntry> out;
  ring.ForEach([&](std::span<const std::uint8_t> packed) {
    out.push_back(Unpack(packed));
    if (texts != nullptr) texts->emplace_back(out.back().text);
  });
  return out;
}

TEST(FlightEntryTest, ProbeIsPackedInTwentyBytesAndRoundTrips) {
  FlightEntry e = Probe(123456789, 3);
  e.flags = kProbeTimeout;
  e.value_ns = -1;
  ASSERT_EQ(PackedSize(e), 20u);
  std::vector<std::uint8_t> buf(PackedSize(e));
  Pack(e, buf);
  const FlightEntry back = Unpack(buf);
  EXPECT_EQ(back.kind, FlightKind::kProbe);
  EXPECT_EQ(back.time_ns, 123456789);
  EXPECT_EQ(back.nic, 3);
  EXPECT_EQ(back.peer_nic, 1);
  EXPECT_EQ(back.port, 49152);
  EXPECT_EQ(back.flags, kProbeTimeout);
  EXPECT_EQ(back.value_ns, -1);
}

TEST(FlightEntryTest, ProbeOneWayTimeIsClampedTo32Bits) {
  FlightEntry e = Probe(1);
  e.value_ns = std::int64_t{1} << 40;
  std::vector<std::uint8_t> buf(PackedSize(e));
  Pack(e, buf);
  EXPECT_EQ(Unpack(buf).value_ns, std::numeric_limits<std::int32_t>::max());
}

TEST(FlightEntryTest, TextIsCutAtAUtf8Boundary) {
  std::string text(kMaxEntryText - 1, 'a');
  text += "\xc3\xa9";  // é straddles the cap
  const FlightEntry e = Log(1, text);
  EXPECT_EQ(PackedSize(e), kGenericBytes + kMaxEntryText - 1);
  std::vector<std::uint8_t> buf(PackedSize(e));
  Pack(e, buf);
  EXPECT_EQ(Unpack(buf).text, std::string(kMaxEntryText - 1, 'a'));
}

TEST(FlightRingTest, NeverExceedsItsCapacityAndDropsTheOldestFirst) {
  FlightRing ring(1000);  // 50 probes
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(ring.Push(Probe(i)));
  const RingCounters c = ring.counters();
  EXPECT_LE(c.bytes, 1000u);
  EXPECT_EQ(c.events, 50u);
  EXPECT_EQ(c.recorded, 500u);
  EXPECT_EQ(c.evicted, 450u);
  const std::vector<FlightEntry> held = All(ring);
  ASSERT_EQ(held.size(), 50u);
  for (std::size_t i = 0; i < held.size(); ++i) EXPECT_EQ(held[i].time_ns, 450 + int(i));
}

TEST(FlightRingTest, MixedSizesWrapAndStayInOrder) {
  FlightRing ring(700);
  std::int64_t t = 0;
  for (int round = 0; round < 200; ++round) {
    ring.Push(Probe(t++));
    ring.Push(Log(t++, std::string(static_cast<std::size_t>(round % 37), 'x')));
  }
  std::vector<std::string> texts;
  const std::vector<FlightEntry> held = All(ring, &texts);
  ASSERT_FALSE(held.empty());
  EXPECT_LE(ring.counters().bytes, 700u);
  EXPECT_EQ(held.back().time_ns, t - 1);  // the newest is always kept
  for (std::size_t i = 1; i < held.size(); ++i) EXPECT_EQ(held[i].time_ns, held[i - 1].time_ns + 1);
  EXPECT_EQ(ring.counters().events + ring.counters().evicted, 400u);
}

TEST(FlightRingTest, AnEntryLargerThanTheRingIsRefused) {
  FlightRing ring(64);
  EXPECT_FALSE(ring.Push(Log(1, std::string(100, 'x'))));
  EXPECT_TRUE(ring.Push(Probe(2)));
  EXPECT_EQ(ring.counters().events, 1u);
}

TEST(FlightRingTest, SliceKeepsTheRangeAndCountsWhatWasOverwritten) {
  constexpr std::int64_t kSecond = 1'000'000'000;
  // 1 s eviction buckets; 100 probes of 20 bytes fit.
  FlightRing ring(2000, kSecond);
  for (int i = 0; i < 300; ++i) ring.Push(Probe(i * kSecond / 10));  // 10 a second, 30 s
  // Held: the last 100 (t = 20.0 s .. 29.9 s); evicted 200 (0 .. 19.9 s).
  const RingSlice all = ring.Slice(0, 30 * kSecond);
  EXPECT_EQ(all.events, 100u);
  EXPECT_EQ(all.dropped_before, 200u);
  const RingSlice recent = ring.Slice(25 * kSecond, 27 * kSecond);
  EXPECT_EQ(recent.events, 20u);
  EXPECT_EQ(recent.dropped_before, 0u);
  const RingSlice straddle = ring.Slice(15 * kSecond, 22 * kSecond);
  EXPECT_EQ(straddle.events, 20u);
  EXPECT_EQ(straddle.dropped_before, 50u);  // 15.0 .. 19.9 s
  EXPECT_EQ(ring.Slice(40 * kSecond, 50 * kSecond).events, 0u);
}

TEST(FlightRingTest, EvictionsPastTheHorizonAreStillCounted) {
  FlightRing ring(200, /*eviction_bucket_ns=*/10, /*eviction_buckets=*/2);
  for (int i = 0; i < 100; ++i) ring.Push(Probe(i));
  // Held 10 (t = 90..99); 90 evicted, most of them summed past the horizon.
  EXPECT_EQ(ring.Slice(0, 100).dropped_before, 90u);
  EXPECT_EQ(ring.Slice(95, 100).dropped_before, 0u);
}

TEST(FlightRingTest, LateAndNegativeTimesAreCountedInTheirBuckets) {
  // 10 ns buckets; 10 probes fit. Times before the epoch, and late pushes.
  FlightRing ring(200, /*eviction_bucket_ns=*/10);
  const std::vector<std::int64_t> times = {-25, -21, -11, -10, -1, 0, -3, 9, 10, 4, 19, 25};
  for (const std::int64_t t : times) ring.Push(Probe(t));
  for (int i = 0; i < 10; ++i) ring.Push(Probe(1000 + i));  // evicts all of the above
  // Evicted by bucket: -30: -25 -21; -20: -11; -10: -10 -1; 0: 0 and the late
  // -3, then 9; 10: 10, the late 4, 19; 20: 25.
  EXPECT_EQ(ring.Slice(-30, 2000).dropped_before, times.size());
  EXPECT_EQ(ring.Slice(-20, 2000).dropped_before, times.size() - 2);
  EXPECT_EQ(ring.Slice(-10, 2000).dropped_before, times.size() - 3);
  EXPECT_EQ(ring.Slice(10, 2000).dropped_before, 4U);
  EXPECT_EQ(ring.Slice(20, 2000).dropped_before, 1U);
}

}  // namespace
}  // namespace hostmesh::agent::recorder
