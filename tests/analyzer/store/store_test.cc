// The RocksDB store in a temp dir, in virtual time: idempotent commits, the
// ledger, time-range scans, reopening, retention.
#include "analyzer/store/store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "analyzer/store/group_committer.h"
#include "tests/analyzer/store/temp_dir.h"
#include "tests/analyzer/store/test_batches.h"

namespace hostmesh::analyzer::store {
namespace {

using analyzer::testing::MakeBatch;
using analyzer::testing::MakeHello;
using analyzer::testing::TempDir;
using namespace std::chrono_literals;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  void Reopen() {
    store_.reset();
    std::string error;
    StoreOptions options;
    options.data_dir = dir_.path() / "db";
    store_ = Store::Open(clock_, options, error);
    ASSERT_TRUE(store_) << error;
  }

  WallTime Now() const { return clock_.RealtimeNow(); }

  std::uint64_t CountResults(WallTime from, WallTime to) const {
    std::uint64_t n = 0;
    const StoreStatus s = store_->ScanResults(from, to, [&](const StoredResult&) {
      ++n;
      return true;
    });
    EXPECT_TRUE(s.ok()) << s.error;
    return n;
  }

  TempDir dir_;
  VirtualClock clock_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, SameBatchTwiceIsStoredOnce) {
  const v1::UploadBatch batch = MakeBatch("h1", 7, 1, 100, Now());
  EXPECT_EQ(store_->Commit(Store::Prepare(batch)).status, CommitStatus::kStored);
  EXPECT_EQ(store_->Commit(Store::Prepare(batch)).status, CommitStatus::kDuplicate);
  EXPECT_EQ(store_->CountResultsByAgent().at("h1"), 100u);
  for (const auto& [identity, copies] : store_->CountResultCopies()) EXPECT_EQ(copies, 1u);
}

TEST_F(StoreTest, DuplicateInsideOneGroupIsCaught) {
  const PreparedBatch a = Store::Prepare(MakeBatch("h1", 7, 1, 10, Now()));
  const PreparedBatch b = Store::Prepare(MakeBatch("h1", 7, 2, 10, Now()));
  const PreparedBatch* group[] = {&a, &b, &a};
  const auto outcomes = store_->Commit(group);
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(outcomes[0].status, CommitStatus::kStored);
  EXPECT_EQ(outcomes[1].status, CommitStatus::kStored);
  EXPECT_EQ(outcomes[2].status, CommitStatus::kDuplicate);
  EXPECT_EQ(store_->CountResultsByAgent().at("h1"), 20u);
}

TEST_F(StoreTest, DuplicateIsDetectedAfterReopen) {
  const v1::UploadBatch batch = MakeBatch("h1", 7, 5, 10, Now());
  ASSERT_EQ(store_->Commit(Store::Prepare(batch)).status, CommitStatus::kStored);
  Reopen();
  EXPECT_EQ(store_->Commit(Store::Prepare(batch)).status, CommitStatus::kDuplicate);
  EXPECT_EQ(store_->LastDurableBatchSeq("h1", 7), 5u);
}

TEST_F(StoreTest, LastDurableBatchSeqIsPerAgentAndBoot) {
  for (std::uint64_t seq : {1, 2, 3, 10}) {
    ASSERT_EQ(store_->Commit(Store::Prepare(MakeBatch("h1", 7, seq, 1, Now()))).status,
              CommitStatus::kStored);
  }
  ASSERT_EQ(store_->Commit(Store::Prepare(MakeBatch("h1", 8, 2, 1, Now()))).status,
            CommitStatus::kStored);
  ASSERT_EQ(store_->Commit(Store::Prepare(MakeBatch("h10", 7, 99, 1, Now()))).status,
            CommitStatus::kStored);
  EXPECT_EQ(store_->LastDurableBatchSeq("h1", 7), 10u);
  EXPECT_EQ(store_->LastDurableBatchSeq("h1", 8), 2u);
  EXPECT_EQ(store_->LastDurableBatchSeq("h1", 9), 0u);
  EXPECT_EQ(store_->LastDurableBatchSeq("h10", 7), 99u);
  EXPECT_EQ(store_->LastDurableBatchSeq("h", 7), 0u);
}

TEST_F(StoreTest, ScanReturnsExactlyTheResultsInTheRangeAcrossBuckets) {
  // 2000 results 1 ms apart starting 5 s before a bucket boundary: two chunks.
  const WallTime start{std::chrono::seconds{1704067195}};
  ASSERT_EQ(store_->Commit(Store::Prepare(MakeBatch("h1", 7, 1, 2000, start))).status,
            CommitStatus::kStored);
  EXPECT_EQ(CountResults(start, start + 2s), 2000u);
  EXPECT_EQ(CountResults(start + 500ms, start + 1500ms), 1000u);
  EXPECT_EQ(CountResults(start + 1999ms, start + 1h), 1u);
  EXPECT_EQ(CountResults(start - 1h, start), 0u);
  std::uint64_t seen = 0;
  store_->ScanResults(start, start + 2s, [&](const StoredResult& r) {
    EXPECT_EQ(r.agent_id, "h1");
    EXPECT_EQ(r.boot_id, 7u);
    EXPECT_EQ(r.batch_seq, 1u);
    return ++seen < 10;
  });
  EXPECT_EQ(seen, 10u) << "a visitor returning false stops the scan";
}

TEST_F(StoreTest, CountsByAgentAndByResultIdentity) {
  ASSERT_EQ(store_->Commit(Store::Prepare(MakeBatch("a", 1, 1, 8, Now()))).status,
            CommitStatus::kStored);
  ASSERT_EQ(store_->Commit(Store::Prepare(MakeBatch("b", 1, 1, 4, Now()))).status,
            CommitStatus::kStored);
  const auto by_agent = store_->CountResultsByAgent();
  EXPECT_EQ(by_agent.at("a"), 8u);
  EXPECT_EQ(by_agent.at("b"), 4u);
  const auto copies = store_->CountResultCopies();
  EXPECT_EQ(copies.size(), 12u);
  EXPECT_EQ(copies.at({"a", 1, 3, 8}), 1u);  // result 7 of batch 1: nic 3, sequence 8 + 1
}

TEST_F(StoreTest, PathReportsAreStoredAndScanned) {
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 0, Now());
  for (int i = 0; i < 3; ++i) {
    v1::PathReport* p = batch.add_paths();
    p->set_src_ip("10.0.0.1");
    p->set_dst_ip("10.0.1.1");
    p->set_src_port(50000 + static_cast<std::uint32_t>(i));
    p->set_time_ns((Now() + std::chrono::seconds{i}).time_since_epoch().count());
    p->add_hops()->set_address("192.168.0.1");
  }
  ASSERT_EQ(store_->Commit(Store::Prepare(batch)).status, CommitStatus::kStored);
  int seen = 0;
  ASSERT_TRUE(store_
                  ->ScanPaths(Now(), Now() + 2s,
                              [&](const StoredPath& p) {
                                EXPECT_EQ(p.path->hops(0).address(), "192.168.0.1");
                                ++seen;
                                return true;
                              })
                  .ok());
  EXPECT_EQ(seen, 2);
}

TEST_F(StoreTest, NicTelemetryIsStoredOnceScannedByEndTimeAndExpiresWithRawData) {
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 10, Now());
  for (int i = 0; i < 3; ++i) {
    v1::NicTelemetry* t = batch.add_telemetry();
    t->set_nic(static_cast<std::uint32_t>(i));
    t->set_start_ns((Now() + std::chrono::seconds{10 * i - 10}).time_since_epoch().count());
    t->set_end_ns((Now() + std::chrono::seconds{10 * i}).time_since_epoch().count());
    v1::CounterDelta* d = t->add_deltas();
    d->set_counter(v1::NIC_COUNTER_SYMBOL_ERROR);
    d->set_delta(100 + static_cast<std::uint64_t>(i));
  }
  const PreparedBatch prepared = Store::Prepare(batch);
  EXPECT_EQ(prepared.telemetry, 3U);
  EXPECT_EQ(prepared.telemetry_chunks.size(), 3U);  // one 10 s bucket each
  ASSERT_EQ(store_->Commit(prepared).status, CommitStatus::kStored);
  ASSERT_EQ(store_->Commit(prepared).status, CommitStatus::kDuplicate);
  Reopen();

  std::vector<std::uint64_t> seen;
  const StoreStatus s =
      store_->ScanTelemetry(Now() + 5s, Now() + 25s, [&](const StoredTelemetry& t) {
        EXPECT_EQ(t.agent_id, "h1");
        EXPECT_EQ(t.boot_id, 7U);
        EXPECT_EQ(t.batch_seq, 1U);
        seen.push_back(t.telemetry->deltas(0).delta());
        return true;
      });
  ASSERT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{101, 102}));

  clock_.Advance(25h);
  ASSERT_TRUE(store_->EnforceRetention().ok());
  int left = 0;
  store_->ScanTelemetry(WallTime::min(), WallTime::max(), [&](const StoredTelemetry&) {
    ++left;
    return true;
  });
  EXPECT_EQ(left, 0) << "telemetry is kept as long as raw results";
}

TEST_F(StoreTest, NicTelemetryOfSomeAgentsIsReadByThoseAgentsOnly) {
  // "h1" is a prefix of "h10": the length before the id keeps them apart.
  const std::vector<std::string> fleet = {"h1", "h10", "h2", "h3"};
  std::uint64_t seq = 1;
  for (const std::string& agent : fleet) {
    v1::UploadBatch batch = MakeBatch(agent, 7, seq++, 1, Now());
    for (int i = 0; i < 4; ++i) {  // ends at 0, 10, 20, 30 s: one bucket each
      v1::NicTelemetry* t = batch.add_telemetry();
      t->set_end_ns((Now() + std::chrono::seconds{10 * i}).time_since_epoch().count());
      t->set_start_ns(t->end_ns() - 10'000'000'000);
    }
    ASSERT_EQ(store_->Commit(Store::Prepare(batch)).status, CommitStatus::kStored);
  }
  const auto scan = [&](WallTime from, WallTime to, const std::vector<std::string>& agents) {
    std::map<std::string, int> seen;
    const StoreStatus s = store_->ScanTelemetryOf(from, to, agents, [&](const StoredTelemetry& t) {
      ++seen[std::string(t.agent_id)];
      return true;
    });
    EXPECT_TRUE(s.ok()) << s.error;
    return seen;
  };
  const std::map<std::string, int> two_buckets = {{"h1", 2}, {"h3", 2}};
  EXPECT_EQ(scan(Now() + 5s, Now() + 25s, {"h3", "h1"}), two_buckets);
  // A range past kMaxSeekBuckets scans every key and keeps the same agents'.
  const std::map<std::string, int> all = {{"h1", 4}, {"h3", 4}};
  EXPECT_EQ(scan(WallTime::min(), WallTime::max(), {"h3", "h1"}), all);
  EXPECT_EQ(scan(Now() - 1h, Now() + 1h, {"h1", "h3"}).at("h1"), 4);
  EXPECT_EQ(scan(WallTime{} - 1h, WallTime::max(), {"h3", "h1"}), all) << "a span past int64";
  EXPECT_TRUE(scan(Now(), Now() + 1h, {"h9"}).empty());
  EXPECT_TRUE(scan(Now(), Now() + 1h, {}).empty());
}

TEST_F(StoreTest, HellosRoundTripAndSurviveReopen) {
  ASSERT_TRUE(store_->PutHello(MakeHello("h1", 7, 8)).ok());
  Reopen();
  const auto hello = store_->GetHello("h1", 7);
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->nics_size(), 8);
  EXPECT_FALSE(store_->GetHello("h1", 8));
}

TEST_F(StoreTest, RetentionDropsOldRawResultsAndKeepsWindowsAndIncidents) {
  const WallTime day_one = Now();
  ASSERT_EQ(store_->Commit(Store::Prepare(MakeBatch("h1", 7, 1, 50, day_one))).status,
            CommitStatus::kStored);
  ASSERT_TRUE(store_->PutWindowSummary(day_one, "cluster", "window-bytes").ok());
  ASSERT_TRUE(store_->PutIncident(day_one, 1, "incident-bytes").ok());

  clock_.Advance(25h);
  const WallTime day_two = Now();
  ASSERT_EQ(store_->Commit(Store::Prepare(MakeBatch("h1", 7, 2, 30, day_two))).status,
            CommitStatus::kStored);
  ASSERT_TRUE(store_->EnforceRetention().ok());

  EXPECT_EQ(CountResults(day_one - 1h, day_one + 1h), 0u) << "older than 24 h: gone";
  EXPECT_EQ(CountResults(day_two, day_two + 1h), 30u) << "fresh results stay";
  int windows = 0;
  store_->ScanWindowSummaries(day_one - 1h, day_two,
                              [&](WallTime start, std::string_view scope, std::string_view bytes) {
                                EXPECT_EQ(start, day_one);
                                EXPECT_EQ(scope, "cluster");
                                EXPECT_EQ(bytes, "window-bytes");
                                ++windows;
                                return true;
                              });
  EXPECT_EQ(windows, 1) << "windows are kept 30 days";
  int incidents = 0;
  store_->ScanIncidents(day_one - 1h, day_two, [&](WallTime, std::uint64_t id, std::string_view) {
    EXPECT_EQ(id, 1u);
    ++incidents;
    return true;
  });
  EXPECT_EQ(incidents, 1);

  clock_.Advance(30 * 24h);
  ASSERT_TRUE(store_->EnforceRetention().ok());
  windows = 0;
  store_->ScanWindowSummaries(WallTime::min(), WallTime::max(),
                              [&](WallTime, std::string_view, std::string_view) {
                                ++windows;
                                return true;
                              });
  EXPECT_EQ(windows, 0) << "past 30 days windows go too";
}

TEST_F(StoreTest, CompactionFiltersExpireRecordsWithoutDeleteRange) {
  ASSERT_EQ(store_->Commit(Store::Prepare(MakeBatch("h1", 7, 1, 50, Now()))).status,
            CommitStatus::kStored);
  ASSERT_TRUE(store_->PutHello(MakeHello("h1", 7)).ok());
  ASSERT_TRUE(store_->PutWindowSummary(Now(), "cluster", "w").ok());
  clock_.Advance(25h);
  ASSERT_EQ(store_->Commit(Store::Prepare(MakeBatch("h1", 8, 1, 5, Now()))).status,
            CommitStatus::kStored);
  // Only the filters act here: no DeleteRange was issued. Raw results are a
  // FIFO, never compacted: their files go by age on RocksDB's own clock, and
  // EnforceRetention's range delete hides them on ours.
  ASSERT_TRUE(store_->Compact().ok());
  EXPECT_EQ(CountResults(WallTime::min(), WallTime::max()), 55u);
  ASSERT_TRUE(store_->EnforceRetention().ok());
  EXPECT_EQ(CountResults(WallTime::min(), WallTime::max()), 5u);
  EXPECT_EQ(store_->LastDurableBatchSeq("h1", 7), 0u) << "ledger entries age by when stored";
  EXPECT_EQ(store_->LastDurableBatchSeq("h1", 8), 1u);
  EXPECT_FALSE(store_->GetHello("h1", 7));
  int windows = 0;
  store_->ScanWindowSummaries(WallTime::min(), WallTime::max(),
                              [&](WallTime, std::string_view, std::string_view) {
                                ++windows;
                                return true;
                              });
  EXPECT_EQ(windows, 1);
}

TEST_F(StoreTest, GroupCommitterStoresConcurrentStreamsOnceEach) {
  GroupCommitter committer(clock_, *store_);
  constexpr int kStreams = 4;
  constexpr int kBatches = 50;
  std::atomic<int> stored{0};
  std::atomic<int> duplicate{0};
  std::vector<std::thread> threads;
  for (int s = 0; s < kStreams; ++s) {
    threads.emplace_back([&, s] {
      auto lane = std::make_shared<CommitLane>();
      for (int b = 1; b <= kBatches; ++b) {
        // Every batch twice, as an agent resending after a lost ack.
        for (int copy = 0; copy < 2; ++copy) {
          committer.Submit(
              lane, MakeBatch("h" + std::to_string(s), 1, b, 20, Now()),
              [&](const CommitReport& report, v1::UploadBatch&) {
                (report.outcome.status == CommitStatus::kStored ? stored : duplicate).fetch_add(1);
              });
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  committer.Stop();
  EXPECT_EQ(stored.load(), kStreams * kBatches);
  EXPECT_EQ(duplicate.load(), kStreams * kBatches);
  EXPECT_LE(committer.groups_written(), static_cast<std::uint64_t>(2 * kStreams * kBatches));
  for (const auto& [identity, copies] : store_->CountResultCopies()) ASSERT_EQ(copies, 1u);
  EXPECT_EQ(store_->CountResultCopies().size(), static_cast<std::size_t>(kStreams * kBatches * 20));
}

TEST_F(StoreTest, AckingAGroupDoesNotHoldUpTheNextWrite) {
  // The first batch's callback (an ack, the analysis feed) submits a second
  // batch and stalls until it is durable: the committer writes it meanwhile,
  // and the second callback still comes after the first.
  GroupCommitter committer(clock_, *store_);
  std::vector<int> order;
  std::mutex mu;
  bool written_meanwhile = false;
  committer.Submit(nullptr, MakeBatch("h1", 1, 1, 5, Now()),
                   [&](const CommitReport& report, v1::UploadBatch&) {
                     EXPECT_EQ(report.outcome.status, CommitStatus::kStored);
                     committer.Submit(nullptr, MakeBatch("h1", 1, 2, 5, Now()),
                                      [&](const CommitReport& second, v1::UploadBatch&) {
                                        EXPECT_EQ(second.outcome.status, CommitStatus::kStored);
                                        std::lock_guard lock(mu);
                                        order.push_back(2);
                                      });
                     const auto deadline = std::chrono::steady_clock::now() + 10s;
                     while (store_->LastDurableBatchSeq("h1", 1) < 2 &&
                            std::chrono::steady_clock::now() < deadline) {
                       std::this_thread::yield();
                     }
                     written_meanwhile = store_->LastDurableBatchSeq("h1", 1) == 2;
                     std::lock_guard lock(mu);
                     order.push_back(1);
                   });
  // Stop commits everything queued and runs every callback before it returns;
  // wait for the first callback to have queued the second batch first.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (store_->LastDurableBatchSeq("h1", 1) < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  committer.Stop();
  EXPECT_TRUE(written_meanwhile);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST_F(StoreTest, SubmitAfterStopFailsAtOnce) {
  GroupCommitter committer(clock_, *store_);
  committer.Stop();
  bool called = false;
  committer.Submit(nullptr, MakeBatch("h1", 1, 1, 1, Now()),
                   [&](const CommitReport& report, v1::UploadBatch&) {
                     called = true;
                     EXPECT_EQ(report.outcome.status, CommitStatus::kFailed);
                   });
  EXPECT_TRUE(called);
}

}  // namespace
}  // namespace hostmesh::analyzer::store

namespace hostmesh::analyzer::store {
namespace {

v1::FlightRecord Flight(std::uint64_t incident, int events, WallTime at) {
  v1::FlightRecord record;
  record.set_incident_id(incident);
  record.set_from_ns((at - 1min).time_since_epoch().count());
  record.set_to_ns(at.time_since_epoch().count());
  for (int i = 0; i < events; ++i) {
    v1::FlightEvent* e = record.add_events();
    e->set_time_ns((at - 30s).time_since_epoch().count() + i);
    e->set_kind(v1::FlightEvent::KIND_LOG);
    e->set_text("warn [verbs] line " + std::to_string(i));
  }
  return record;
}

std::vector<std::pair<std::string, int>> FlightsOf(const Store& store, std::uint64_t incident) {
  std::vector<std::pair<std::string, int>> out;
  const StoreStatus s = store.ScanFlightRecords(incident, [&](const StoredFlightRecord& r) {
    out.emplace_back(std::string(r.agent_id), r.record->events_size());
    return true;
  });
  EXPECT_TRUE(s.ok()) << s.error;
  return out;
}

TEST_F(StoreTest, FlightRecordsAreStoredWithTheirBatchAndReadByIncident) {
  v1::UploadBatch a = MakeBatch("h1", 7, 1, 10, Now());
  *a.add_flight_records() = Flight(5, 3, Now());
  v1::UploadBatch b = MakeBatch("h2", 9, 4, 10, Now());
  *b.add_flight_records() = Flight(5, 2, Now());
  *b.add_flight_records() = Flight(6, 1, Now());
  const PreparedBatch pa = Store::Prepare(a);
  const PreparedBatch pb = Store::Prepare(b);
  const PreparedBatch* group[] = {&pa, &pb};
  for (const CommitOutcome& o : store_->Commit(group)) EXPECT_EQ(o.status, CommitStatus::kStored);
  const std::vector<std::pair<std::string, int>> five = {{"h1", 3}, {"h2", 2}};
  EXPECT_EQ(FlightsOf(*store_, 5), five);
  EXPECT_EQ(FlightsOf(*store_, 6), (std::vector<std::pair<std::string, int>>{{"h2", 1}}));
  EXPECT_TRUE(FlightsOf(*store_, 7).empty());
  // A resent batch is a duplicate: its record is not stored twice.
  EXPECT_EQ(store_->Commit(Store::Prepare(a)).status, CommitStatus::kDuplicate);
  Reopen();
  EXPECT_EQ(FlightsOf(*store_, 5), five);
}

TEST_F(StoreTest, FlightRecordsAreKeptForTheSummaryRetention) {
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 10, Now());
  *batch.add_flight_records() = Flight(5, 3, Now());
  ASSERT_EQ(store_->Commit(Store::Prepare(batch)).status, CommitStatus::kStored);
  clock_.Advance(std::chrono::days{29});
  ASSERT_TRUE(store_->Compact().ok());
  EXPECT_EQ(FlightsOf(*store_, 5).size(), 1u);
  clock_.Advance(std::chrono::days{2});  // 31 days after it was stored
  ASSERT_TRUE(store_->Compact().ok());
  EXPECT_TRUE(FlightsOf(*store_, 5).empty());
}

TEST(StoreUpgradeTest, AStoreWithoutTheFlightRecordsFamilyOpens) {
  TempDir dir;
  const std::string path = (dir.path() / "db").string();
  {
    // The families of a store from before flight records.
    rocksdb::DBOptions options;
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const char* name : {"default", "raw_results", "path_reports", "ledger", "hellos",
                             "windows", "incidents", "nic_telemetry"}) {
      families.emplace_back(name, rocksdb::ColumnFamilyOptions());
    }
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, path, families, &handles, &db).ok());
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    delete db;
  }
  VirtualClock clock;
  StoreOptions options;
  options.data_dir = path;
  std::string error;
  std::unique_ptr<Store> store = Store::Open(clock, options, error);
  ASSERT_TRUE(store) << error;
  v1::UploadBatch batch = MakeBatch("h1", 7, 1, 10, clock.RealtimeNow());
  *batch.add_flight_records() = Flight(5, 1, clock.RealtimeNow());
  EXPECT_EQ(store->Commit(Store::Prepare(batch)).status, CommitStatus::kStored);
  EXPECT_EQ(FlightsOf(*store, 5).size(), 1u);
}

}  // namespace
}  // namespace hostmesh::analyzer::store
