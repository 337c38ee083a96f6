#include "agent/core/port_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "agent/core/permutation.h"

namespace hostmesh::agent {
namespace {

using namespace std::chrono_literals;

const MonoTime kStart{1000s};

TEST(agent_port_pool, PermutationIsABijectionForAnySize) {
  for (const std::uint32_t n : {1U, 2U, 3U, 17U, 64U, 1000U, 16384U, 65536U}) {
    for (const std::uint64_t key : {0ULL, 1ULL, 0xDEADBEEFULL}) {
      const Permutation perm(n, key);
      std::vector<bool> hit(n, false);
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint32_t v = perm(i);
        ASSERT_LT(v, n);
        ASSERT_FALSE(hit[v]) << "n=" << n << " repeats " << v;
        hit[v] = true;
      }
    }
  }
}

TEST(agent_port_pool, PermutationDependsOnTheKey) {
  const Permutation a(1000, 1);
  const Permutation b(1000, 2);
  int same = 0;
  for (std::uint32_t i = 0; i < 1000; ++i) same += a(i) == b(i) ? 1 : 0;
  EXPECT_LT(same, 20);  // about 1 expected by chance
}

TEST(agent_port_pool, InitialPoolIsDistinctPortsInRange) {
  PortPoolOptions options;
  const PortPool pool(options, 4, kStart, 7);
  ASSERT_EQ(pool.ports().size(), 16U);
  const std::set<std::uint16_t> distinct(pool.ports().begin(), pool.ports().end());
  EXPECT_EQ(distinct.size(), 16U);
  for (const std::uint16_t port : pool.ports()) {
    EXPECT_GE(port, options.min_port);
    EXPECT_LE(port, options.max_port);
  }
  EXPECT_EQ(pool.generation(), 0U);
  EXPECT_EQ(pool.next_rotation(), kStart + 60s);
  EXPECT_EQ(pool.replace_per_rotation(), 4U);
  EXPECT_EQ(pool.range_size(), 16384U);
}

TEST(agent_port_pool, RotationReplacesTheOldestQuarterWithFreshPorts) {
  PortPool pool(PortPoolOptions{}, 4, kStart, 7);
  const std::vector<std::uint16_t> before(pool.ports().begin(), pool.ports().end());
  pool.AdvanceTo(kStart + 60s - 1ns);
  EXPECT_EQ(pool.generation(), 0U);

  pool.AdvanceTo(kStart + 60s);
  EXPECT_EQ(pool.generation(), 1U);
  const std::vector<std::uint16_t> after(pool.ports().begin(), pool.ports().end());
  for (std::size_t slot = 0; slot < 4; ++slot) {
    EXPECT_NE(after[slot], before[slot]);
    EXPECT_EQ(std::count(before.begin(), before.end(), after[slot]), 0);
  }
  for (std::size_t slot = 4; slot < 16; ++slot) EXPECT_EQ(after[slot], before[slot]);

  pool.AdvanceTo(kStart + 120s);  // the next quarter goes next
  EXPECT_EQ(pool.generation(), 2U);
  EXPECT_NE(pool.ports()[4], before[4]);
  EXPECT_EQ(pool.ports()[8], before[8]);
  EXPECT_EQ(pool.ports_introduced(), 16U + 8U);
}

TEST(agent_port_pool, AllowedPortsAreTheOnlyOnesDrawnAndAllRotateIn) {
  // A per-QP device (soft-RoCE) offers the ports of its send QPs only.
  PortPoolOptions options;
  options.pool_size = 4;
  options.rotation_fraction = 0.5;
  options.allowed_ports = {61000, 50001, 57236, 50001, 64000, 49999, 60000, 52000, 53000};
  const std::set<std::uint16_t> allowed(options.allowed_ports.begin(), options.allowed_ports.end());
  PortPool pool(options, 2, kStart, 3);
  EXPECT_EQ(pool.range_size(), 8U);  // the duplicate counts once
  std::set<std::uint16_t> seen;
  for (int rotation = 0; rotation < 4; ++rotation) {
    pool.AdvanceTo(kStart + rotation * 60s);
    const std::set<std::uint16_t> current(pool.ports().begin(), pool.ports().end());
    EXPECT_EQ(current.size(), 4U);
    for (const std::uint16_t port : current) EXPECT_EQ(allowed.count(port), 1U) << port;
    seen.insert(current.begin(), current.end());
  }
  EXPECT_EQ(seen, allowed);  // two per rotation: all eight by the third
}

TEST(agent_port_pool, AtLeastOnePortRotates) {
  PortPoolOptions options;
  options.rotation_fraction = 0.0;
  PortPool pool(options, 2, kStart, 1);
  EXPECT_EQ(pool.replace_per_rotation(), 1U);
  options.rotation_fraction = 1.0;
  EXPECT_EQ(PortPool(options, 2, kStart, 1).replace_per_rotation(), 16U);
}

// Follows which port enters the pool at each rotation.
std::vector<std::uint16_t> EntryOrder(PortPool& pool, int rotations) {
  std::vector<std::uint16_t> entries(pool.ports().begin(), pool.ports().end());
  std::vector<std::uint16_t> previous = entries;
  MonoTime now = kStart;
  for (int r = 0; r < rotations; ++r) {
    now = pool.next_rotation();
    pool.AdvanceTo(now);
    for (std::size_t slot = 0; slot < pool.ports().size(); ++slot) {
      if (pool.ports()[slot] != previous[slot]) entries.push_back(pool.ports()[slot]);
    }
    previous.assign(pool.ports().begin(), pool.ports().end());
  }
  return entries;
}

TEST(agent_port_pool, EveryPortOfTheRangeIsUsedBeforeAnyRepeats) {
  PortPoolOptions options;
  options.min_port = 1000;
  options.max_port = 1063;  // 64 ports
  options.pool_size = 8;
  options.rotation_fraction = 0.25;  // 2 per rotation
  PortPool pool(options, 2, kStart, 42);
  const std::vector<std::uint16_t> entries = EntryOrder(pool, 28 + 32 * 20);

  // The first 64 ports to enter are the whole range: 8 initial + 28 rotations x 2.
  const std::set<std::uint16_t> first(entries.begin(), entries.begin() + 64);
  EXPECT_EQ(first.size(), 64U);
  EXPECT_EQ(*first.begin(), 1000);
  EXPECT_EQ(*first.rbegin(), 1063);

  // Over 20 more walks every port enters about equally often, and never while
  // it is still in the pool (at least pool_size / per-rotation rotations apart).
  std::map<std::uint16_t, int> times;
  std::map<std::uint16_t, std::size_t> last_entry;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    ++times[entries[i]];
    if (const auto it = last_entry.find(entries[i]); it != last_entry.end()) {
      EXPECT_GE(i - it->second, 8U) << "port " << entries[i];
    }
    last_entry[entries[i]] = i;
  }
  ASSERT_EQ(times.size(), 64U);
  for (const auto& [port, count] : times) {
    EXPECT_GE(count, 19) << port;
    EXPECT_LE(count, 22) << port;
  }
}

TEST(agent_port_pool, DrawsAreUniformOverThePool) {
  PortPool pool(PortPoolOptions{}, 2, kStart, 3);
  Rng rng(5);
  std::map<std::uint16_t, int> counts;
  const int draws = 160000;
  for (int i = 0; i < draws; ++i) ++counts[pool.Draw(1, rng)];
  ASSERT_EQ(counts.size(), 16U);
  double chi2 = 0;
  for (const auto& [port, count] : counts) {
    const double expected = draws / 16.0;
    chi2 += (count - expected) * (count - expected) / expected;
  }
  EXPECT_LT(chi2, 40.0);  // 15 degrees of freedom: p < 0.001 above 37.7
}

TEST(agent_port_pool, CountsDistinctPortsPerPairInTheLastHour) {
  PortPool pool(PortPoolOptions{}, 3, kStart, 11);
  Rng rng(1);
  // One hour of 10 probes/s towards NIC 1, none towards NIC 2.
  MonoTime now = kStart;
  for (; now < kStart + 1h; now += 100ms) {
    pool.AdvanceTo(now);
    pool.Draw(1, rng);
  }
  // Generations 0..59 were drawn from: 16 + 59 x 4 ports.
  EXPECT_EQ(pool.DistinctPortsUsed(1, kStart + 1h - 1ns), 252U);
  EXPECT_EQ(pool.DistinctPortsUsed(2, kStart + 1h - 1ns), 0U);

  // Half an hour later only generations 30..59 are inside the window.
  pool.AdvanceTo(kStart + 90min);
  EXPECT_EQ(pool.DistinctPortsUsed(1, kStart + 90min), 16U + 29U * 4U);
  // Two hours later nothing is.
  pool.AdvanceTo(kStart + 3h);
  EXPECT_EQ(pool.DistinctPortsUsed(1, kStart + 3h), 0U);
  EXPECT_EQ(pool.DistinctPortsUsed(7, kStart + 3h), 0U);  // no such NIC
}

// Within the window every port drawn counts once, however many generations
// it was drawn in (a port stays in its slot for several) and when it re-enters
// the pool after a walk of a small range.
TEST(agent_port_pool, CountsEachPortDrawnOnce) {
  for (const bool small_range : {false, true}) {
    PortPoolOptions options;
    if (small_range) {
      options.allowed_ports = {50000, 50001, 50002, 50003, 50004, 50005};
      options.pool_size = 4;
    }
    PortPool pool(options, 2, kStart, 7);
    Rng rng(9);
    std::set<std::uint16_t> drawn;
    // Sparse draws: some generations of a port draw it, some do not.
    for (MonoTime now = kStart; now < kStart + 30min; now += 23s) {
      pool.AdvanceTo(now);
      drawn.insert(pool.Draw(1, rng));
    }
    EXPECT_EQ(pool.DistinctPortsUsed(1, kStart + 30min), drawn.size()) << small_range;
    if (small_range) {
      EXPECT_EQ(drawn.size(), 6U);
    }
  }
}

TEST(agent_port_pool, CountsPortsOfLargePools) {
  PortPoolOptions options;
  options.pool_size = 100;  // bitmasks of two words
  PortPool pool(options, 2, kStart, 2);
  Rng rng(3);
  for (int i = 0; i < 5000; ++i) pool.Draw(1, rng);
  EXPECT_EQ(pool.DistinctPortsUsed(1, kStart), 100U);
}

TEST(agent_port_pool, ALongStallRenewsThePoolOnceAndMovesOn) {
  PortPool pool(PortPoolOptions{}, 2, kStart, 9);
  const std::vector<std::uint16_t> before(pool.ports().begin(), pool.ports().end());
  pool.AdvanceTo(kStart + 10h);
  EXPECT_EQ(pool.generation(), 4U);  // 16 / 4: just enough to renew every slot
  EXPECT_GT(pool.next_rotation(), kStart + 10h);
  EXPECT_LE(pool.next_rotation(), kStart + 10h + 60s);
  for (const std::uint16_t port : pool.ports()) {
    EXPECT_EQ(std::count(before.begin(), before.end(), port), 0);
  }
}

TEST(agent_port_pool, ARangeNoBiggerThanThePoolIsTheWholePool) {
  PortPoolOptions options;
  options.min_port = 5000;
  options.max_port = 5009;
  PortPool pool(options, 2, kStart, 1);
  ASSERT_EQ(pool.ports().size(), 10U);
  pool.AdvanceTo(kStart + 5min);
  EXPECT_EQ(pool.generation(), 0U);  // nothing fresh to rotate in
  std::set<std::uint16_t> ports(pool.ports().begin(), pool.ports().end());
  EXPECT_EQ(ports.size(), 10U);
}

TEST(agent_port_pool, RangeOneLargerThanThePoolStillRotates) {
  PortPoolOptions options;
  options.min_port = 5000;
  options.max_port = 5016;  // 17 ports, pool of 16
  PortPool pool(options, 2, kStart, 1);
  for (int r = 1; r <= 50; ++r) {
    pool.AdvanceTo(kStart + r * 60s);
    const std::set<std::uint16_t> ports(pool.ports().begin(), pool.ports().end());
    ASSERT_EQ(ports.size(), 16U);
  }
  EXPECT_EQ(pool.generation(), 50U);
}

// What a transport builds ahead (verbs address handles) is what the next
// rotation brings, across walks of a small range too; asking changes nothing.
TEST(agent_port_pool, NextRotationPortsAreTheOnesTheRotationBringsIn) {
  PortPoolOptions small;
  small.min_port = 5000;
  small.max_port = 5019;  // 20 ports, pool of 16: a new walk every few rotations
  for (const PortPoolOptions& options : {PortPoolOptions{}, small}) {
    PortPool pool(options, 2, kStart, 9);
    PortPool twin(options, 2, kStart, 9);
    for (int r = 1; r <= 30; ++r) {
      const std::vector<std::uint16_t> ahead = pool.NextRotationPorts();
      ASSERT_EQ(ahead.size(), 4U);
      pool.AdvanceTo(kStart + r * 60s);
      twin.AdvanceTo(kStart + r * 60s);
      // Rotation r replaces slots 4(r-1) .. 4(r-1)+3 (mod 16), oldest first.
      std::vector<std::uint16_t> brought;
      for (int i = 0; i < 4; ++i) brought.push_back(pool.ports()[(4 * (r - 1) + i) % 16]);
      EXPECT_EQ(ahead, brought) << "rotation " << r;
      EXPECT_TRUE(std::equal(pool.ports().begin(), pool.ports().end(), twin.ports().begin(),
                             twin.ports().end()));
      EXPECT_EQ(pool.ports_introduced(), twin.ports_introduced());
    }
  }
  PortPoolOptions whole;
  whole.min_port = 5000;
  whole.max_port = 5009;
  EXPECT_TRUE(PortPool(whole, 2, kStart, 1).NextRotationPorts().empty());
}

TEST(agent_port_pool, SameSeedSamePorts) {
  PortPool a(PortPoolOptions{}, 2, kStart, 77);
  PortPool b(PortPoolOptions{}, 2, kStart, 77);
  PortPool c(PortPoolOptions{}, 2, kStart, 78);
  a.AdvanceTo(kStart + 10min);
  b.AdvanceTo(kStart + 10min);
  c.AdvanceTo(kStart + 10min);
  EXPECT_TRUE(std::ranges::equal(a.ports(), b.ports()));
  EXPECT_FALSE(std::ranges::equal(a.ports(), c.ports()));
}

TEST(agent_port_pool, RejectsImpossibleOptions) {
  PortPoolOptions options;
  options.pool_size = 0;
  EXPECT_THROW(PortPool(options, 2, kStart, 1), std::invalid_argument);
  options = {};
  options.min_port = 2000;
  options.max_port = 1000;
  EXPECT_THROW(PortPool(options, 2, kStart, 1), std::invalid_argument);
  options = {};
  options.rotation_period = 0s;
  EXPECT_THROW(PortPool(options, 2, kStart, 1), std::invalid_argument);
  options = {};
  options.rotation_fraction = 1.5;
  EXPECT_THROW(PortPool(options, 2, kStart, 1), std::invalid_argument);
}

}  // namespace
}  // namespace hostmesh::agent
