// What the analyzer stores of its judgement, against a real RocksDB: one copy
// per incident, keyed by its last activity so retention counts from there.
#include "analyzer/feed/state_keeper.h"

#include <gtest/gtest.h>

#include "analyzer/state/state_codec.h"
#include "tests/analyzer/store/temp_dir.h"

namespace hostmesh::analyzer::app {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

TEST(StateKeeper, AnIncidentIsStoredOnceUnderItsLastActivity) {
  analyzer::testing::TempDir dir;
  VirtualClock clock;
  store::StoreOptions options;
  options.data_dir = dir.path() / "db";
  std::string error;
  auto store = store::Store::Open(clock, options, error);
  ASSERT_TRUE(store) << error;
  AnalysisFeed feed(*store, {}, nullptr);
  StateKeeper keeper(*store, clock);

  analysis::Incident inc;
  inc.id = 1;
  inc.kind = analysis::IncidentKind::kRnicDown;
  inc.evidence.first_seen_ns = 100 * kSecond;
  inc.evidence.last_seen_ns = 120 * kSecond;
  analysis::IncidentTracker tracker;
  tracker.Restore({inc}, 2);
  analysis::WindowReport report;
  report.start_ns = 100 * kSecond;
  report.end_ns = 120 * kSecond;
  report.present_hosts = {0, 1};
  for (analysis::HostId h : report.present_hosts) {
    analysis::HostSla row;
    row.host = h;
    row.sla.probes = 10 * (h + 1);
    report.sla.hosts.push_back(row);
  }
  keeper.Save(report, {1}, tracker, feed);

  inc.evidence.last_seen_ns = 140 * kSecond;  // seen again
  inc.evidence.windows = 2;
  tracker.Restore({inc}, 2);
  report.start_ns = 120 * kSecond;
  report.end_ns = 140 * kSecond;
  keeper.Save(report, {1}, tracker, feed);

  std::vector<std::pair<std::int64_t, int>> stored;  // key time, windows
  ASSERT_TRUE(store
                  ->ScanIncidents(WallTime{}, WallTime::max(),
                                  [&](WallTime at, std::uint64_t id, std::string_view bytes) {
                                    EXPECT_EQ(id, 1u);
                                    const auto decoded = state::DecodeIncident(bytes);
                                    EXPECT_TRUE(decoded.has_value());
                                    stored.emplace_back(at.time_since_epoch().count(),
                                                        decoded ? decoded->evidence.windows : -1);
                                    return true;
                                  })
                  .ok());
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].first, 140 * kSecond);
  EXPECT_EQ(stored[0].second, 2);
  EXPECT_EQ(keeper.write_errors(), 0u);

  // Two window summaries stored; the history reads them back in order.
  bool truncated = true;
  const auto history = keeper.History(0, 200 * kSecond, 10, &truncated);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(history[0].start_ns(), 100 * kSecond);
  EXPECT_EQ(history[1].start_ns(), 120 * kSecond);
  // Per-host rows are kept apart: the history does not decode them.
  EXPECT_EQ(history[0].hosts_size(), 0);
  int host_rows = 0;
  ASSERT_TRUE(
      store
          ->ScanWindowSummaries(WallTime{}, WallTime::max(),
                                [&](WallTime, std::string_view scope, std::string_view bytes) {
                                  const auto part = state::DecodeWindowSummary(bytes);
                                  EXPECT_TRUE(part.has_value());
                                  if (scope == "hosts" && part) {
                                    host_rows += part->hosts_size();
                                    EXPECT_EQ(part->end_ns(), part->start_ns() + 20 * kSecond);
                                  }
                                  return true;
                                })
          .ok());
  EXPECT_EQ(host_rows, 4);  // two windows of two hosts
  // A restart resumes after the last window, whichever record comes last.
  const auto last = store->LastWindowSummary();
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(state::DecodeWindowSummary(last->second)->end_ns(), 140 * kSecond);
}

}  // namespace
}  // namespace hostmesh::analyzer::app
