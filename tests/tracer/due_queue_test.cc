// The continuous tracer's per-source due queue, against a std::set doing the
// same operations (the container it replaced), and Ipv4::ToString.
#include "tracer/due_queue.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace hostmesh::tracer {
namespace {

using namespace std::chrono_literals;

const MonoTime kT0{std::chrono::seconds{100}};

using Queue = DueQueue<int>;
using Item = Queue::Item;

FiveTuple Tuple(std::uint16_t sport) {
  return {Ipv4{0x0A000001}, Ipv4{0x0A000002}, sport, kRoceV2Port, kIpProtoUdp};
}

std::vector<Item> Drain(Queue q) {
  std::vector<Item> out;
  while (!q.empty()) {
    out.push_back(q.front());
    q.Erase(q.front().due, q.front().tuple);
  }
  return out;
}

TEST(DueQueue, KeepsDueTimeThenTupleOrderWhateverTheInsertOrder) {
  Queue q;
  q.Insert({kT0 + 2s, Tuple(3)});
  q.Insert({kT0 + 1s, Tuple(9)});  // before the head
  q.Insert({kT0 + 2s, Tuple(1)});  // a tie: the smaller tuple first
  q.Insert({kT0 + 5s, Tuple(2)});
  const std::vector<Item> want = {
      {kT0 + 1s, Tuple(9)}, {kT0 + 2s, Tuple(1)}, {kT0 + 2s, Tuple(3)}, {kT0 + 5s, Tuple(2)}};
  EXPECT_EQ(Drain(q), want);
}

TEST(DueQueue, ErasesFromTheMiddleAndIgnoresWhatIsNotQueued) {
  Queue q;
  for (std::uint16_t p = 0; p < 5; ++p) q.Insert({kT0 + std::chrono::seconds{p}, Tuple(p)});
  q.Erase(kT0 + 2s, Tuple(2));
  q.Erase(kT0 + 2s, Tuple(7));  // not queued
  q.Erase(kT0 + 9s, Tuple(3));  // its tuple, another due time
  EXPECT_EQ(q.size(), 4u);
  const std::vector<Item> want = {
      {kT0, Tuple(0)}, {kT0 + 1s, Tuple(1)}, {kT0 + 3s, Tuple(3)}, {kT0 + 4s, Tuple(4)}};
  EXPECT_EQ(Drain(q), want);
}

TEST(DueQueue, ADrainedLargeQueueGivesItsMemoryBackAndASmallOneKeepsIt) {
  Queue large;
  for (std::uint16_t p = 0; p < 1000; ++p) large.Insert({kT0 + std::chrono::seconds{p}, Tuple(p)});
  ASSERT_GE(large.capacity(), 1000u);
  EXPECT_EQ(Drain(large).size(), 1000u);  // Drain works on a copy
  for (std::uint16_t p = 0; p < 1000; ++p) large.Erase(kT0 + std::chrono::seconds{p}, Tuple(p));
  EXPECT_TRUE(large.empty());
  EXPECT_EQ(large.capacity(), 0u);
  large.Insert({kT0, Tuple(1)});  // and works on
  EXPECT_EQ(large.front().tuple, Tuple(1));

  Queue small;
  for (std::uint16_t p = 0; p < 8; ++p) small.Insert({kT0 + std::chrono::seconds{p}, Tuple(p)});
  const std::size_t capacity = small.capacity();
  for (std::uint16_t p = 0; p < 8; ++p) small.Erase(kT0 + std::chrono::seconds{p}, Tuple(p));
  EXPECT_TRUE(small.empty());
  EXPECT_EQ(small.capacity(), capacity) << "a few slots are kept for the next items";
}

TEST(DueQueue, ValuesRideAlongWithTheirItems) {
  Queue q;
  q.Insert({kT0 + 3s, Tuple(1), 30});
  q.Insert({kT0 + 1s, Tuple(2), 10});
  q.Insert({kT0 + 2s, Tuple(3), 20});
  std::vector<int> values;
  for (const Item& i : Drain(q)) values.push_back(i.value);
  EXPECT_EQ(values, (std::vector<int>{10, 20, 30}));
}

TEST(DueQueue, FirstAfterIsStrictlyLater) {
  Queue q;
  EXPECT_EQ(q.FirstAfter(kT0), nullptr);
  q.Insert({kT0, Tuple(1)});
  q.Insert({kT0 + 1s, Tuple(2)});
  ASSERT_NE(q.FirstAfter(kT0), nullptr);
  EXPECT_EQ(*q.FirstAfter(kT0), (Item{kT0 + 1s, Tuple(2)}));
  EXPECT_EQ(q.FirstAfter(kT0 + 1s), nullptr);
  q.Erase(q.front().due, q.front().tuple);
  EXPECT_EQ(*q.FirstAfter(kT0 - 1s), (Item{kT0 + 1s, Tuple(2)}));
}

TEST(DueQueue, MatchesAnOrderedSetUnderTheTracersChurn) {
  // Mostly appends and head removals (traces), some middle erases (rotation),
  // some inserts at `now` (new 5-tuples); the head and FirstAfter agree with
  // a std::set after every step, through the head's compaction.
  std::mt19937 rng(7);
  Queue q;
  std::set<Item> ref;
  MonoTime now = kT0;
  std::uint16_t next_port = 0;
  for (int step = 0; step < 20000; ++step) {
    now += std::chrono::milliseconds{rng() % 50};
    const auto op = rng() % 10;
    if (op < 4 || ref.empty()) {
      const Item item{op == 0 ? now : now + 60s, Tuple(next_port++)};
      q.Insert(item);
      ref.insert(item);
    } else if (op < 8) {
      q.Erase(ref.begin()->due, ref.begin()->tuple);
      ref.erase(ref.begin());
    } else {
      auto it = ref.begin();
      std::advance(it, static_cast<long>(rng() % ref.size()));
      q.Erase(it->due, it->tuple);
      ref.erase(it);
    }
    ASSERT_EQ(q.size(), ref.size());
    if (ref.empty()) continue;
    ASSERT_EQ(q.front(), *ref.begin());
    const auto later =
        ref.upper_bound({now, FiveTuple{Ipv4{~0u}, Ipv4{~0u}, 0xFFFF, 0xFFFF, 0xFF}});
    const Item* got = q.FirstAfter(now);
    ASSERT_EQ(got == nullptr, later == ref.end());
    if (got != nullptr) {
      ASSERT_EQ(*got, *later);
    }
  }
}

TEST(Ipv4, ToStringIsTheDottedQuad) {
  EXPECT_EQ(Ipv4{0}.ToString(), "0.0.0.0");
  EXPECT_EQ(Ipv4{0xFFFFFFFF}.ToString(), "255.255.255.255");
  EXPECT_EQ(Ipv4{0xC612640A}.ToString(), "198.18.100.10");
  EXPECT_EQ(Ipv4{0x0A000109}.ToString(), "10.0.1.9");
  for (std::uint32_t v : {0x01020304u, 0x6463FF00u, 0x0A0B0C0Du}) {
    EXPECT_EQ(Ipv4::Parse(Ipv4{v}.ToString()), Ipv4{v});
  }
}

}  // namespace
}  // namespace hostmesh::tracer
