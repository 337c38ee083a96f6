#include "analyzer/analysis/slot_array.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace hostmesh::analysis {
namespace {

struct Slot {
  std::uint64_t key = 7;
  std::uint32_t value = 0;
};

TEST(SlotArray, EverySlotStartsAsTheFill) {
  const SlotArray<Slot> small(100, Slot{42, 3});
  ASSERT_EQ(small.size(), 100u);
  for (const Slot& s : small) {
    EXPECT_EQ(s.key, 42u);
    EXPECT_EQ(s.value, 3u);
  }
  // Large enough for huge pages: on a 2 MiB boundary, filled to the end.
  const std::size_t n = 3 * SlotArray<Slot>::kHugePage / sizeof(Slot) + 5;
  const SlotArray<Slot> large(n, Slot{9, 1});
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large.data()) % SlotArray<Slot>::kHugePage, 0u);
  EXPECT_EQ(large[0].key, 9u);
  EXPECT_EQ(large[n - 1].key, 9u);
  EXPECT_EQ(large[n - 1].value, 1u);
}

TEST(SlotArray, CopiesAreIndependentAndMovesAndSwapsHandOver) {
  SlotArray<Slot> a(4, Slot{});
  a[2].value = 5;
  SlotArray<Slot> copy = a;
  copy[2].value = 6;
  EXPECT_EQ(a[2].value, 5u);
  EXPECT_EQ(copy[2].value, 6u);

  SlotArray<Slot> moved = std::move(copy);
  EXPECT_EQ(moved.size(), 4u);
  EXPECT_EQ(moved[2].value, 6u);

  SlotArray<Slot> other(1, Slot{1, 1});
  other.swap(moved);
  EXPECT_EQ(other.size(), 4u);
  EXPECT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].key, 1u);

  const SlotArray<Slot> empty;
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.begin(), empty.end());
}

}  // namespace
}  // namespace hostmesh::analysis
