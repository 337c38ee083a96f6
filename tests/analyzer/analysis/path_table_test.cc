// The path table forgets 5-tuples that rotated out of the agents' port pools,
// and frees fabric paths only after the windows that counted under them.
// Virtual time throughout.

#include "analyzer/analysis/path_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "analyzer/analysis/aging_map.h"
#include "analyzer/analysis/analysis.h"

namespace hostmesh::analysis {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kT0 = 1'704'067'200 * kSecond;  // a window boundary

// Links of a 2-rail, 4-spine toy fabric: NIC links 0..1, rail-spine 10 + r*4 + s.
PathRecord PathVia(std::uint16_t port, std::uint32_t spine, HostId host = 0) {
  return PathRecord{.host = host,
                    .src_nic = 0,
                    .dst_nic = 1,
                    .src_port = port,
                    .dst_port = 4791,
                    .links = {0, 10 + spine, 14 + spine, 1}};
}

ProbeRecord Probe(std::uint16_t port, std::int64_t t, bool timeout = false) {
  return ProbeRecord{.host = 0,
                     .src_nic = 0,
                     .dst_nic = 1,
                     .src_port = port,
                     .dst_port = 4791,
                     .send_time_ns = t,
                     .t1_app_send_ns = t,
                     .t2_nic_send_ns = timeout ? 0 : t + 1000,
                     .t3_nic_recv_ns = timeout ? 0 : t + 9000,
                     .t4_app_recv_ns = timeout ? 0 : t + 20000,
                     .timeout = timeout};
}

TEST(AgingMap, EraseKeepsEveryOtherKeyFindable) {
  // Random keys, random ages: after sweeps, exactly the fresh keys remain,
  // each with its value (backward-shift deletion must not lose a run).
  AgingMap map;
  std::map<std::uint64_t, std::pair<std::uint32_t, AgingMap::Tick>> truth;
  std::mt19937_64 rng(7);
  for (AgingMap::Tick tick = 0; tick < 200; ++tick) {
    for (int i = 0; i < 300; ++i) {
      const std::uint64_t key = rng() % 20'000;  // collisions and re-inserts
      const auto value = static_cast<std::uint32_t>(rng());
      *map.Insert(key, value, tick).first = value;
      truth[key] = {value, tick};
    }
    map.Sweep(map.capacity() / 4, tick, 8, [&](std::uint64_t key, std::uint32_t value) {
      ASSERT_TRUE(truth.count(key));
      EXPECT_EQ(truth[key].first, value);
      EXPECT_GT(static_cast<AgingMap::Tick>(tick - truth[key].second), 8);
      truth.erase(key);
    });
  }
  EXPECT_EQ(map.size(), truth.size());
  for (const auto& [key, entry] : truth) {
    const std::uint32_t* v = map.Find(key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_EQ(*v, entry.first);
    EXPECT_LE(static_cast<AgingMap::Tick>(199 - entry.second), 8 + 4);  // 4 sweeps per pass
  }
}

TEST(AgingMap, TouchKeepsAnEntryAndAnEmptiedTableShrinks) {
  AgingMap map;
  for (std::uint64_t k = 0; k < 100'000; ++k) map.Insert(k, 1, 0);
  const std::size_t full = map.memory_bytes();
  EXPECT_NE(map.Touch(42, 5), nullptr);
  EXPECT_EQ(map.Touch(100'000, 5), nullptr);  // absent: not inserted
  std::size_t erased = 0;
  for (int pass = 0; pass < 2; ++pass) {
    map.Sweep(map.capacity(), 5, 3, [&](std::uint64_t, std::uint32_t) { ++erased; });
  }
  EXPECT_EQ(erased, 99'999u);
  EXPECT_EQ(map.size(), 1u);
  EXPECT_NE(map.Find(42), nullptr);
  EXPECT_LT(map.memory_bytes() * 100, full);
}

// A trace a gray link cut short at the rail switch: the uplink and downlink
// unknown, every spine's a candidate.
PathRecord CutShort(std::uint16_t port) {
  PathRecord p = PathVia(port, 0);
  p.links[1] = p.links[2] = kUnknown;
  for (std::uint32_t s = 0; s < 4; ++s) {
    p.candidates.push_back({1, 10 + s});
    p.candidates.push_back({2, 14 + s});
  }
  return p;
}

TEST(PathTable, ACutShortTraceKeepsTheKnownPathItFits) {
  PathTable table(5min);
  table.AdvanceTo(kT0);
  table.Add(PathVia(49152, 2));
  const MiddleId known = table.Lookup(0, 0, 1, 49152);
  table.Add(CutShort(49152));
  EXPECT_EQ(table.Lookup(0, 0, 1, 49152), known);
  EXPECT_EQ(table.partial_kept(), 1u);
  EXPECT_TRUE(table.Candidates(known).empty());
}

TEST(PathTable, ACutShortTraceOfANewTupleKeepsItsCandidates) {
  PathTable table(5min);
  table.AdvanceTo(kT0);
  table.Add(CutShort(49153));
  const MiddleId m = table.Lookup(0, 0, 1, 49153);
  ASSERT_NE(m, PathTable::kNoPath);
  EXPECT_EQ(std::vector<LinkId>(table.Middle(m).begin(), table.Middle(m).end()),
            (std::vector<LinkId>{kUnknown, kUnknown}));
  const auto candidates = table.Candidates(m);
  ASSERT_EQ(candidates.size(), 8u);
  EXPECT_EQ(candidates[0].position, 0u);  // renumbered from the middle's first link
  EXPECT_EQ(candidates[0].link, 10u);
  EXPECT_EQ(candidates[1].position, 1u);
  EXPECT_EQ(candidates[1].link, 14u);
  // The same partial path is one fabric part; a whole trace replaces it.
  table.Add(CutShort(49154));
  EXPECT_EQ(table.Lookup(0, 0, 1, 49154), m);
  table.Add(PathVia(49153, 1));
  EXPECT_NE(table.Lookup(0, 0, 1, 49153), m);
  EXPECT_EQ(table.partial_kept(), 0u);
}

TEST(PathTable, APartialTraceThatContradictsTheKnownPathReplacesIt) {
  PathTable table(5min);
  table.AdvanceTo(kT0);
  table.Add(PathVia(49152, 2));
  const MiddleId known = table.Lookup(0, 0, 1, 49152);
  PathRecord moved = PathVia(49152, 3);  // rerouted: the uplink answered differently
  moved.links[2] = kUnknown;
  table.Add(moved);
  EXPECT_NE(table.Lookup(0, 0, 1, 49152), known);
  EXPECT_EQ(table.partial_kept(), 0u);
}

std::vector<LinkId> LinksOf(const PathTable& table, MiddleId m) {
  return {table.Middle(m).begin(), table.Middle(m).end()};
}

std::vector<std::pair<std::uint32_t, LinkId>> CandidatesOf(const PathTable& table, MiddleId m) {
  std::vector<std::pair<std::uint32_t, LinkId>> out;
  for (const PathCandidate& c : table.Candidates(m)) out.emplace_back(c.position, c.link);
  return out;
}

TEST(PathTable, ARouteChangeLeavesTheTupleAmbiguousBetweenItsTwoPathsForTheHold) {
  PathTable table(5min, 2min);
  table.AdvanceTo(kT0);
  EXPECT_TRUE(table.Add(PathVia(49152, 2)));   // a new 5-tuple: a fresh draw
  EXPECT_FALSE(table.Add(PathVia(49152, 2)));  // the same route again
  EXPECT_TRUE(table.Add(PathVia(49152, 0)));   // moved (a flap's down phase)
  EXPECT_EQ(table.route_changes(), 1u);
  EXPECT_EQ(table.churning(), 1u);
  const MiddleId m = table.Lookup(0, 0, 1, 49152);
  EXPECT_EQ(LinksOf(table, m), (std::vector<LinkId>{kUnknown, kUnknown}));
  EXPECT_EQ(CandidatesOf(table, m),
            (std::vector<std::pair<std::uint32_t, LinkId>>{{0, 10}, {0, 12}, {1, 14}, {1, 16}}));
  EXPECT_TRUE(table.Churned(m));
  // A cut-short trace listing the same candidates is another part: no route
  // moved, so what it knows it crossed counts (inference_problem_builder.cc).
  PathRecord cut = PathVia(49160, 0);
  cut.links[1] = cut.links[2] = kUnknown;
  cut.candidates = {{1, 10}, {1, 12}, {2, 14}, {2, 16}};
  EXPECT_TRUE(table.Add(cut));
  const MiddleId cut_id = table.Lookup(0, 0, 1, 49160);
  EXPECT_NE(cut_id, m);
  EXPECT_EQ(CandidatesOf(table, cut_id), CandidatesOf(table, m));
  EXPECT_FALSE(table.Churned(cut_id));
  // Back and forth within the hold: still the two, the hold renewed.
  table.AdvanceTo(kT0 + 90 * kSecond);
  EXPECT_TRUE(table.Add(PathVia(49152, 2)));
  EXPECT_EQ(table.Lookup(0, 0, 1, 49152), m);
  table.AdvanceTo(kT0 + 200 * kSecond);  // 110 s after the last change
  EXPECT_EQ(table.Lookup(0, 0, 1, 49152), m);
  // No change for the whole hold: the newest path stands alone.
  table.AdvanceTo(kT0 + 211 * kSecond);
  EXPECT_EQ(table.churning(), 0u);
  EXPECT_EQ(LinksOf(table, table.Lookup(0, 0, 1, 49152)), (std::vector<LinkId>{12, 16}));
  // The ambiguous part and the old path are orphaned, freed once their windows are judged.
  table.HoldOrphans(PathTable::kNoWindow);
  table.FreeOrphans(kT0 + 211 * kSecond);
  EXPECT_EQ(table.middle_count(), 2u);  // spine 2's and the cut one: the merge and spine 0's freed
}

TEST(PathTable, AWholeTraceOfAPartiallyKnownRouteIsNoRouteChange) {
  PathTable table(5min, 2min);
  table.AdvanceTo(kT0);
  EXPECT_TRUE(table.Add(CutShort(49153)));
  EXPECT_FALSE(table.Add(PathVia(49153, 1)));  // what the partial one could be
  EXPECT_EQ(table.route_changes(), 0u);
  EXPECT_EQ(LinksOf(table, table.Lookup(0, 0, 1, 49153)), (std::vector<LinkId>{11, 15}));
  // A partial trace that contradicts neither leaves the known path.
  EXPECT_FALSE(table.Add(CutShort(49153)));
  EXPECT_EQ(LinksOf(table, table.Lookup(0, 0, 1, 49153)), (std::vector<LinkId>{11, 15}));
}

TEST(PathTable, ARouteChangeToAnUnlistedSilentHopLeavesThatPositionOpen) {
  PathTable table(5min, 2min);
  table.AdvanceTo(kT0);
  table.Add(PathVia(49152, 2));
  PathRecord moved = PathVia(49152, 3);
  moved.links[2] = kUnknown;  // silent, no candidates listed: any link
  EXPECT_TRUE(table.Add(moved));
  const MiddleId m = table.Lookup(0, 0, 1, 49152);
  EXPECT_EQ(LinksOf(table, m), (std::vector<LinkId>{kUnknown, kUnknown}));
  EXPECT_EQ(CandidatesOf(table, m),
            (std::vector<std::pair<std::uint32_t, LinkId>>{{0, 12}, {0, 13}}));
}

TEST(PathTable, AReportedTupleIsForgottenAfterTtlUnlessProbed) {
  PathTable table(5min);
  table.AdvanceTo(kT0);
  table.Add(PathVia(49152, 0));  // rotated out right after its report
  table.Add(PathVia(49153, 1));  // still probed every 10 s
  std::int64_t t = kT0;
  for (; t < kT0 + 5 * 60 * kSecond; t += 10 * kSecond) {
    table.AdvanceTo(t);
    EXPECT_NE(table.Use(0, 0, 1, 49153), PathTable::kNoPath);
  }
  EXPECT_NE(table.Lookup(0, 0, 1, 49152), PathTable::kNoPath) << "forgotten before ttl";
  EXPECT_EQ(table.aged_out(), 0u);
  for (; t < kT0 + 390 * kSecond; t += 10 * kSecond) {  // 1.3 x ttl
    table.AdvanceTo(t);
    table.Use(0, 0, 1, 49153);
  }
  EXPECT_EQ(table.Lookup(0, 0, 1, 49152), PathTable::kNoPath) << "kept past 1.3 x ttl";
  EXPECT_EQ(table.Lookup(0, 0, 1, 49153), 1u);  // its middle id, intact
  EXPECT_EQ(table.aged_out(), 1u);
  EXPECT_EQ(table.size(), 1u);
  // A fresh report brings it back.
  table.Add(PathVia(49152, 0));
  EXPECT_NE(table.Lookup(0, 0, 1, 49152), PathTable::kNoPath);
}

TEST(PathTable, AHostAtItsCapHasItsNewTuplesRefusedAndNoOtherHostIsHeldBack) {
  PathTable table(5min, PathTable::kDefaultChurnHold, 100);
  table.AdvanceTo(kT0);
  for (std::uint16_t p = 0; p < 100; ++p) table.Add(PathVia(40000 + p, p % 4, 1));
  EXPECT_EQ(table.host_size(1), 100u);
  EXPECT_TRUE(table.crowded_hosts().empty());
  table.Add(PathVia(50000, 0, 1));
  EXPECT_EQ(table.Lookup(1, 0, 1, 50000), PathTable::kNoPath) << "past its cap";
  EXPECT_EQ(table.refused_for_host_cap(), 1u);
  EXPECT_EQ(table.crowded_hosts(), std::vector<HostId>{1});
  // A 5-tuple it holds still follows its route.
  table.Add(PathVia(40000, 3, 1));
  EXPECT_EQ(table.route_changes(), 1u);
  // Another host is not held back.
  table.Add(PathVia(50000, 0, 0));
  EXPECT_NE(table.Lookup(0, 0, 1, 50000), PathTable::kNoPath);
  EXPECT_EQ(table.host_size(0), 1u);
  EXPECT_EQ(table.refused_for_host_cap(), 1u);
}

TEST(PathTable, ACrowdedHostsIdleTuplesAreEvictedEarlyAndItsProbedOnesKept) {
  PathTable table(5min, PathTable::kDefaultChurnHold, 100);
  table.AdvanceTo(kT0);
  for (std::uint16_t p = 0; p < 100; ++p) table.Add(PathVia(40000 + p, p % 4, 1));
  for (std::uint16_t p = 0; p < 50; ++p) table.Add(PathVia(40000 + p, p % 4, 0));
  table.Add(PathVia(50000, 0, 1));  // refused: host 1 is crowded now
  // Host 1 probes ten of its 5-tuples; nobody probes host 0's.
  for (std::int64_t t = kT0; t <= kT0 + 160 * kSecond; t += 10 * kSecond) {
    table.AdvanceTo(t);
    for (std::uint16_t p = 0; p < 10; ++p) table.Use(1, 0, 1, 40000 + p);
  }
  EXPECT_EQ(table.host_size(1), 75u)
      << "idle past a quarter of ttl: evicted down to 3/4 of its cap";
  for (std::uint16_t p = 0; p < 10; ++p) {
    EXPECT_NE(table.Lookup(1, 0, 1, 40000 + p), PathTable::kNoPath) << "probed, kept";
  }
  EXPECT_EQ(table.evicted_for_host_cap(), 25u);
  EXPECT_EQ(table.host_size(0), 50u) << "an uncrowded host keeps its paths for ttl";
  EXPECT_TRUE(table.crowded_hosts().empty());
  table.Add(PathVia(50000, 0, 1));
  EXPECT_NE(table.Lookup(1, 0, 1, 50000), PathTable::kNoPath) << "room again";
  EXPECT_EQ(table.refused_for_host_cap(), 1u);
}

TEST(PathTable, ARestartsReplayedPathsCountAsFreshAtTheFirstAdvance) {
  // Replayed before the analysis' clock starts, however old the reports are.
  PathTable table(5min);
  table.Add(PathVia(49152, 0));
  table.AdvanceTo(kT0);
  table.AdvanceTo(kT0 + 4 * 60 * kSecond);
  EXPECT_NE(table.Lookup(0, 0, 1, 49152), PathTable::kNoPath);
}

TEST(PathTable, AClockJumpKeepsWhatWasTouchedSinceTheLastAdvance) {
  PathTable table(5min);
  table.AdvanceTo(kT0);
  table.Add(PathVia(49152, 0));           // before the jump: stale after it
  table.AdvanceTo(kT0 + 10 * kSecond);    // (so it is older than the last Advance)
  table.Add(PathVia(49153, 1));           // touched during the jump
  table.AdvanceTo(kT0 + 3600 * kSecond);  // an hour later
  EXPECT_EQ(table.Lookup(0, 0, 1, 49152), PathTable::kNoPath);
  EXPECT_NE(table.Lookup(0, 0, 1, 49153), PathTable::kNoPath);
  table.AdvanceTo(kT0 + 3600 * kSecond + 299 * kSecond);
  EXPECT_NE(table.Lookup(0, 0, 1, 49153), PathTable::kNoPath);
  table.AdvanceTo(kT0 + 3600 * kSecond + 400 * kSecond);
  EXPECT_EQ(table.Lookup(0, 0, 1, 49153), PathTable::kNoPath);
}

TEST(PathTable, OrphanedMiddlesAreFreedAndTheirIdsReused) {
  PathTable table(1min, 0s);  // no churn hold: a new path replaces the old one at once
  table.AdvanceTo(kT0);
  table.Add(PathVia(49152, 0));
  table.Add(PathVia(49153, 1));
  table.Add(PathVia(49153, 2));  // a new path for the same 5-tuple orphans spine 1's middle
  EXPECT_EQ(table.middle_count(), 3u);
  table.HoldOrphans(PathTable::kNoWindow);
  table.FreeOrphans(kT0);
  EXPECT_EQ(table.middles_freed(), 1u);
  EXPECT_EQ(table.middle_count(), 2u);
  table.Add(PathVia(49154, 3));  // takes the freed id
  EXPECT_EQ(table.Lookup(0, 0, 1, 49154), 1u);
  const auto middle = table.Middle(1);
  EXPECT_EQ(std::vector<LinkId>(middle.begin(), middle.end()), (std::vector<LinkId>{13, 17}));
  // Reported again before it was freed, an orphan is adopted back under its id.
  table.Add(PathVia(49152, 3));  // orphans spine 0's middle (id 0)
  table.Add(PathVia(49155, 0));  // adopts it
  table.HoldOrphans(PathTable::kNoWindow);
  table.FreeOrphans(kT0);
  EXPECT_EQ(table.Lookup(0, 0, 1, 49155), 0u);
  EXPECT_EQ(table.middles_freed(), 1u);
}

TEST(PathTable, RotatingPoolsKeepTheTableFlat) {
  // 20 hosts x 8 NICs, pools of 16 ports, a quarter replaced every 6 s (ten
  // times the default rotation: 10 hours of ports in one). Every live
  // 5-tuple is reported when its port enters the pool and probed 10 times a
  // second per NIC; after the first ttl the table holds the live pools plus
  // about ttl of rotation, and its memory stops growing.
  constexpr HostId kHosts = 20;
  constexpr NicId kNics = 8;
  PathTable table(5min);
  std::mt19937_64 rng(3);
  std::vector<std::vector<std::uint16_t>> pools(kHosts * kNics);
  std::uint16_t next_port = 0;
  auto report = [&](HostId h, NicId n, std::uint16_t port) {
    for (NicId d = 0; d < kNics; ++d) {
      if (d == n) continue;
      PathRecord p{.host = h, .src_nic = n, .dst_nic = d, .src_port = port, .dst_port = 4791};
      p.links = {h * kNics + n, 1000 + n * 8 + port % 8, 1000 + d * 8 + port % 8, h * kNics + d};
      table.Add(p);
    }
  };
  for (HostId h = 0; h < kHosts; ++h) {
    for (NicId n = 0; n < kNics; ++n) {
      for (int i = 0; i < 16; ++i) {
        pools[h * kNics + n].push_back(next_port);
        report(h, n, next_port++);
      }
    }
  }
  std::size_t max_size = 0, bytes_at_half = 0, max_bytes_second_half = 0;
  constexpr int kSeconds = 3600;
  for (int s = 0; s < kSeconds; ++s) {
    table.AdvanceTo(kT0 + s * kSecond);
    if (s % 6 == 5) {
      for (auto& pool : pools) {
        const HostId h = static_cast<HostId>(&pool - pools.data()) / kNics;
        const NicId n = static_cast<NicId>(&pool - pools.data()) % kNics;
        for (int i = 0; i < 4; ++i) {
          pool.erase(pool.begin());
          pool.push_back(next_port);
          report(h, n, next_port++);
        }
      }
    }
    for (std::size_t p = 0; p < pools.size(); ++p) {
      for (int k = 0; k < 10; ++k) {
        const auto h = static_cast<HostId>(p / kNics);
        const auto n = static_cast<NicId>(p % kNics);
        const auto d = static_cast<NicId>((n + 1 + rng() % (kNics - 1)) % kNics);
        const std::uint16_t port = pools[p][rng() % 16];
        ASSERT_NE(table.Use(h, n, d, port), PathTable::kNoPath) << "a live 5-tuple was forgotten";
      }
    }
    max_size = std::max(max_size, table.size());
    if (s == kSeconds / 2) bytes_at_half = table.memory_bytes();
    if (s > kSeconds / 2)
      max_bytes_second_half = std::max(max_bytes_second_half, table.memory_bytes());
  }
  // Live: 20 x 8 x 7 x 16 = 17,920 5-tuples; rotation brings 20 x 8 x 7 x 4
  // per 6 s = 44,800 a minute, of which 1.3 x ttl's worth at most is kept.
  const std::size_t live = kHosts * kNics * (kNics - 1) * 16;
  const std::size_t churn_per_minute = kHosts * kNics * (kNics - 1) * 4 * 10;
  EXPECT_LE(max_size, live + churn_per_minute * 13 / 2);
  EXPECT_GE(table.size(), live + churn_per_minute * 5 - churn_per_minute);
  EXPECT_EQ(max_bytes_second_half, bytes_at_half) << "memory grew in the second half";
  EXPECT_GT(table.aged_out(), 1'000'000u);
  EXPECT_LE(table.middle_count(), 8u * 8 * 8);  // fabric parts: bounded by the fabric
}

TEST(PathTable, AnOpenWindowStillFindsTheMiddleItCountedUnder) {
  // path_ttl shorter than window + grace (the analyzer's config forbids it;
  // here it forces a path to age out while its window is open).
  AnalysisConfig config;
  config.path_ttl = 8s;
  Analysis analysis(config);
  analysis.Advance(kT0);
  analysis.AddPath(PathVia(49152, 2));
  analysis.Advance(kT0 + kSecond);
  for (int i = 0; i < 20; ++i) analysis.AddResult(Probe(49152, kT0 + 2 * kSecond + i * 100'000));
  // Aged out while window [kT0, kT0+20 s) is open: its middle is an orphan.
  analysis.Advance(kT0 + 11 * kSecond);
  analysis.Advance(kT0 + 22 * kSecond);
  EXPECT_EQ(analysis.paths().Lookup(0, 0, 1, 49152), PathTable::kNoPath);
  EXPECT_EQ(analysis.stats().paths_aged_out, 1u);
  // A new fabric part must not take the orphan's id before the window is judged.
  analysis.AddPath(PathVia(49153, 3));
  EXPECT_NE(analysis.paths().Lookup(0, 0, 1, 49153), 0u);
  const auto reports = analysis.Advance(kT0 + 30 * kSecond);
  ASSERT_EQ(reports.size(), 1u);
  const auto& crossed = reports[0].coverage.crossed;
  EXPECT_NE(std::find(crossed.begin(), crossed.end(), 12u), crossed.end());  // spine 2
  EXPECT_NE(std::find(crossed.begin(), crossed.end(), 16u), crossed.end());
  EXPECT_EQ(std::find(crossed.begin(), crossed.end(), 13u), crossed.end());  // not spine 3
  EXPECT_EQ(reports[0].coverage.traced_probes, 20u);
  // Judged: now it is freed.
  EXPECT_EQ(analysis.stats().path_middles_freed, 1u);
  EXPECT_EQ(analysis.paths().middle_count(), 1u);
}

}  // namespace
}  // namespace hostmesh::analysis
