#include "agent/verbs/address_handle_cache.h"

#include <gtest/gtest.h>

#include <vector>

#include "agent/verbs/verbs_owner.h"

namespace hostmesh::agent::verbs {
namespace {

struct FakeAh {
  int id;
};
std::vector<int> g_destroyed;
struct FakeAhDeleter {
  static constexpr const char* kName = "fake ah";
  int operator()(FakeAh* ah) const {
    g_destroyed.push_back(ah->id);
    delete ah;
    return 0;
  }
};
using Owner = UniqueHandle<FakeAh, FakeAhDeleter>;
using Cache = BasicAddressHandleCache<Owner>;

class AddressHandleCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { g_destroyed.clear(); }
  static void Add(Cache& cache, AddressHandleKey key, int id) {
    ASSERT_TRUE(cache.MakeRoom());
    cache.Insert(key, Owner(new FakeAh{id}));
  }
};

TEST_F(AddressHandleCacheTest, OneHandlePerDestinationAndLabel) {
  Cache cache(8);
  Add(cache, {1, 100}, 1);
  Add(cache, {1, 101}, 2);
  Add(cache, {2, 100}, 3);
  EXPECT_EQ(cache.Find({1, 100})->id, 1);
  EXPECT_EQ(cache.Find({1, 101})->id, 2);
  EXPECT_EQ(cache.Find({2, 100})->id, 3);
  EXPECT_EQ(cache.Find({2, 101}), nullptr);
}

TEST_F(AddressHandleCacheTest, EvictsTheLeastRecentlyUsedIdleHandle) {
  Cache cache(2);
  Add(cache, {1, 1}, 1);
  Add(cache, {1, 2}, 2);
  cache.Find({1, 1});  // 2 is now the oldest
  Add(cache, {1, 3}, 3);
  EXPECT_EQ(g_destroyed, std::vector<int>{2});
  EXPECT_EQ(cache.evicted(), 1u);
  EXPECT_EQ(cache.size(), 2u);
}

TEST_F(AddressHandleCacheTest, NeverEvictsAHandleWithASendInFlight) {
  Cache cache(2);
  Add(cache, {1, 1}, 1);
  Add(cache, {1, 2}, 2);
  cache.AddInFlight({1, 1});
  cache.AddInFlight({1, 2});
  EXPECT_FALSE(cache.MakeRoom());  // the caller retries later
  EXPECT_TRUE(g_destroyed.empty());
  cache.ReleaseInFlight({1, 2});
  EXPECT_TRUE(cache.MakeRoom());
  EXPECT_EQ(g_destroyed, std::vector<int>{2});
}

}  // namespace
}  // namespace hostmesh::agent::verbs
