// The evidence writer over a real RocksDB store in a temp dir, in virtual
// time: probes of the followed 5-tuples in the capture range and nothing
// else, appended capture by capture, the budget, the disk cap, restarts and
// retention.
#include "analyzer/evidence/evidence_writer.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/analyzer/store/temp_dir.h"

namespace hostmesh::analyzer::evidence {
namespace {

using namespace std::chrono_literals;
using analyzer::testing::TempDir;

constexpr std::int64_t kSecond = 1'000'000'000;

class EvidenceWriterTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  void Reopen(std::chrono::nanoseconds summary_retention = std::chrono::hours{24 * 30}) {
    writer_.reset();
    store_.reset();
    store::StoreOptions options;
    options.data_dir = dir_.path() / "db";
    options.summary_retention = summary_retention;
    std::string error;
    store_ = store::Store::Open(clock_, options, error);
    ASSERT_TRUE(store_) << error;
    writer_ = std::make_unique<EvidenceWriter>(*store_, clock_, config_);
  }

  std::int64_t T(int seconds) const { return t0_ + std::int64_t{seconds} * kSecond; }

  // One probe a second from each of `agent`'s NIC pairs (0->1, 1->0, 2->3)
  // on ports 50000 and 50001 over [from, to) seconds; NIC 1's probes time
  // out from `fail_from` on; with a counter delta per NIC every 10 s.
  void Upload(const std::string& agent, int from, int to, int fail_from = 1 << 30) {
    v1::UploadBatch batch;
    batch.set_agent_id(agent);
    batch.set_boot_id(7);
    batch.set_batch_seq(++seq_);
    for (int s = from; s < to; ++s) {
      for (const auto& [src, dst] : {std::pair{0u, 1u}, {1u, 0u}, {2u, 3u}}) {
        for (std::uint32_t port : {50000u, 50001u}) {
          v1::ProbeResult& r = *batch.add_results();
          r.set_src_nic(src);
          r.set_dst_nic(dst);
          r.set_src_port(port);
          r.set_dst_port(4791);
          r.set_sequence(seq_ * 100000 + static_cast<std::uint64_t>(batch.results_size()));
          const std::int64_t t = T(s) + port;
          r.set_send_time_ns(t);
          r.set_app_send_ns(t);
          r.set_nic_send_ns(t + 2000);
          r.set_nic_recv_ns(t + 10000);
          r.set_app_recv_ns(t + 30000);
          r.set_timeout(s >= fail_from && (src == 1 || dst == 1));
        }
      }
      if (s % 10 == 0) {
        for (std::uint32_t nic = 0; nic < 4; ++nic) {
          v1::NicTelemetry& t = *batch.add_telemetry();
          t.set_nic(nic);
          t.set_start_ns(T(s - 10));
          t.set_end_ns(T(s));
          v1::CounterDelta& d = *t.add_deltas();
          d.set_counter(v1::NIC_COUNTER_RX_DISCARDS_PHY);
          d.set_delta(s >= fail_from && nic == 1 ? 50 : 0);
        }
      }
    }
    ASSERT_EQ(store_->Commit(store::Store::Prepare(batch)).status, store::CommitStatus::kStored);
  }

  // A link incident following host-a's 0->1 on port 50000 and host-b's 2->3
  // on port 50001.
  EvidenceEvent LinkEvent(std::uint64_t id, int capture_from, int capture_to) const {
    EvidenceEvent e;
    e.incident_id = id;
    e.kind = "link_loss";
    e.summary = "link 12";
    e.opened_ns = T(120);
    e.targets = {{Target::Kind::kLink, 12}, {Target::Kind::kLink, 13, 0, true}};
    e.target_agents = {"", ""};
    e.tuples = {{0, "host-a", 0, 1, 50000, {0, 12, 20, 1}},
                {1, "host-b", 2, 3, 50001, {2, 13, 21, 3}}};
    e.capture_from_ns = T(capture_from);
    e.capture_to_ns = T(capture_to);
    e.counter_agents = {"host-a"};
    v1::evidence::WindowVerdict v;
    v.set_start_ns(T(capture_to - 20));
    v.set_end_ns(T(capture_to));
    v.set_loss(0.2);
    e.verdict = v;
    return e;
  }

  StoredEvidence Read(std::uint64_t id) const {
    std::string error;
    auto stored = ReadEvidence(*store_, id, &error);
    EXPECT_TRUE(stored.has_value()) << error;
    return stored ? *stored : StoredEvidence{};
  }

  TempDir dir_;
  VirtualClock clock_;
  const std::int64_t t0_ = clock_.RealtimeNow().time_since_epoch().count();
  EvidenceConfig config_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<EvidenceWriter> writer_;
  std::uint64_t seq_ = 0;
};

TEST_F(EvidenceWriterTest, KeepsTheFollowedTuplesProbesOfTheRangeAndTheCounters) {
  Upload("host-a", 0, 200);
  Upload("host-b", 0, 200);
  Upload("host-c", 0, 200);  // follows nothing
  clock_.Advance(200s);
  writer_->Apply(LinkEvent(1, 60, 140));
  const StoredEvidence e = Read(1);
  EXPECT_EQ(e.header.kind(), "link_loss");
  ASSERT_EQ(e.header.groups_size(), 2);
  EXPECT_EQ(e.header.groups(0).role(), "suspect");
  EXPECT_EQ(e.header.groups(1).role(), "sibling");
  ASSERT_EQ(e.header.tuples_size(), 2);
  EXPECT_EQ(e.header.tuples(0).links_size(), 4);
  ASSERT_EQ(e.parts.size(), 1u);
  const v1::evidence::EvidencePart& part = e.parts[0];
  ASSERT_EQ(part.probes_size(), 160) << "80 s of one probe a second on each followed 5-tuple";
  std::set<std::uint32_t> tuples;
  for (const auto& p : part.probes()) {
    EXPECT_GE(p.send_time_ns(), T(60));
    EXPECT_LT(p.send_time_ns(), T(140));
    EXPECT_EQ(p.network_ns(), 8000);
    EXPECT_EQ(p.processing_ns(), 22000);
    tuples.insert(p.tuple());
  }
  EXPECT_EQ(tuples, (std::set<std::uint32_t>{0, 1}));
  // host-a's four NICs, every 10 s of the range.
  ASSERT_EQ(part.counters_size(), 32);
  for (const auto& c : part.counters()) EXPECT_EQ(c.agent_id(), "host-a");
  EXPECT_EQ(e.header.capture().from_ns(), T(60));
  EXPECT_EQ(e.header.capture().to_ns(), T(140));
  EXPECT_EQ(e.header.capture().probes_kept(), 160u);
  ASSERT_EQ(e.header.verdicts_size(), 1);
  EXPECT_DOUBLE_EQ(e.header.verdicts(0).loss(), 0.2);
}

TEST_F(EvidenceWriterTest, LaterCapturesAppendOnlyWhatIsNew) {
  Upload("host-a", 0, 200);
  Upload("host-b", 0, 200);
  clock_.Advance(200s);
  writer_->Apply(LinkEvent(1, 60, 140));
  writer_->Apply(LinkEvent(1, 60, 160));  // the next window: from 140 only
  writer_->Apply(LinkEvent(1, 60, 160));  // the same again: nothing
  const StoredEvidence e = Read(1);
  ASSERT_EQ(e.parts.size(), 2u);
  EXPECT_EQ(e.parts[1].from_ns(), T(140));
  EXPECT_EQ(e.parts[1].probes_size(), 40);
  EXPECT_EQ(e.header.capture().probes_kept(), 200u);
  EXPECT_EQ(e.header.verdicts_size(), 2) << "one verdict per window";
}

TEST_F(EvidenceWriterTest, AnRnicGroupGathersItsOwnProbesAndShowsTheOnset) {
  Upload("host-a", 0, 200, /*fail_from=*/100);
  clock_.Advance(200s);
  EvidenceEvent e;
  e.incident_id = 4;
  e.kind = "rnic_lossy";
  e.opened_ns = T(100);
  e.targets = {{Target::Kind::kRnic, 3, 1}, {Target::Kind::kRnic, 3, 2, true}};
  e.target_agents = {"host-a", "host-a"};
  e.capture_from_ns = T(40);
  e.capture_to_ns = T(160);
  writer_->Apply(e);
  const StoredEvidence s = Read(4);
  // NIC 1's pairs (0->1, 1->0) in the suspect's group; 2->3 in the sibling's.
  ASSERT_EQ(s.header.tuples_size(), 6);
  int first_timeout = -1;
  std::size_t suspect = 0;
  for (const auto& p : s.parts.at(0).probes()) {
    const auto& t = s.header.tuples(static_cast<int>(p.tuple()));
    if (t.group() == 1) {
      EXPECT_EQ(t.src_nic(), 2u);
      EXPECT_FALSE(p.timeout());
      continue;
    }
    ++suspect;
    if (p.timeout() && first_timeout < 0) {
      first_timeout = static_cast<int>((p.send_time_ns() - T(0)) / kSecond);
    }
  }
  EXPECT_EQ(suspect, 4u * 120u);
  EXPECT_EQ(first_timeout, 100) << "the moment it began, with healthy probes before it";
}

TEST_F(EvidenceWriterTest, OverTheBudgetSuccessesAreThinnedAndTheHeaderSaysSo) {
  config_.incident_bytes = 2000;
  Reopen();
  Upload("host-a", 0, 200, /*fail_from=*/130);
  Upload("host-b", 0, 200);
  clock_.Advance(200s);
  writer_->Apply(LinkEvent(1, 0, 200));
  const StoredEvidence e = Read(1);
  EXPECT_LE(e.header.capture().bytes(), 2000u);
  EXPECT_GT(e.header.capture().probes_thinned(), 0u);
  EXPECT_GT(e.header.capture().thinned_every(), 1u);
  std::size_t timeouts = 0;
  for (const auto& p : e.parts.at(0).probes()) timeouts += p.timeout() ? 1 : 0;
  EXPECT_EQ(timeouts, 70u) << "every timeout of host-a's 0->1 kept";
  EXPECT_EQ(writer_->stats().thinned_probes.load(), e.header.capture().probes_thinned());
}

TEST_F(EvidenceWriterTest, ARestartedWriterGoesOnWhereTheStoreLeftIt) {
  Upload("host-a", 0, 200);
  Upload("host-b", 0, 200);
  clock_.Advance(200s);
  writer_->Apply(LinkEvent(1, 60, 140));
  Reopen();
  EXPECT_EQ(writer_->stats().incidents.load(), 1u);
  EXPECT_GT(writer_->stats().bytes.load(), 0u);
  writer_->Apply(LinkEvent(1, 60, 160));
  const StoredEvidence e = Read(1);
  EXPECT_EQ(e.header.verdicts_size(), 2);
  ASSERT_EQ(e.parts.size(), 2u);
  EXPECT_EQ(e.parts[1].from_ns(), T(140)) << "nothing captured twice";
}

TEST_F(EvidenceWriterTest, OverTheDiskCapTheOldestIncidentsEvidenceGoes) {
  Upload("host-a", 0, 200);
  Upload("host-b", 0, 200);
  clock_.Advance(200s);
  writer_->Apply(LinkEvent(1, 0, 200));
  const std::uint64_t one = writer_->stats().bytes.load();
  config_.disk_cap_bytes = one * 2 + one / 2;
  Reopen();
  writer_->Apply(LinkEvent(2, 0, 200));
  EXPECT_EQ(writer_->stats().dropped_disk_cap.load(), 0u);
  writer_->Apply(LinkEvent(3, 0, 200));
  EXPECT_EQ(writer_->stats().dropped_disk_cap.load(), 1u);
  std::string error;
  EXPECT_FALSE(ReadEvidence(*store_, 1, &error).has_value());
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_TRUE(ReadEvidence(*store_, 2, &error).has_value());
  EXPECT_TRUE(ReadEvidence(*store_, 3, &error).has_value());
  EXPECT_LE(writer_->stats().bytes.load(), config_.disk_cap_bytes);
}

TEST_F(EvidenceWriterTest, EvidenceOutlivesRawRetentionAndExpiresAfterTheSummaries) {
  Upload("host-a", 0, 200);
  Upload("host-b", 0, 200);
  clock_.Advance(200s);
  writer_->Apply(LinkEvent(1, 60, 140));
  clock_.Advance(7h);  // the raw results are past their 6 h
  ASSERT_TRUE(store_->EnforceRetention().ok());
  std::size_t raw = 0;
  ASSERT_TRUE(store_
                  ->ScanResults(WallTime::min(), WallTime::max(),
                                [&](const store::StoredResult&) {
                                  ++raw;
                                  return true;
                                })
                  .ok());
  EXPECT_EQ(raw, 0u);
  EXPECT_EQ(Read(1).parts.at(0).probes_size(), 160);
  writer_->Expire();
  EXPECT_EQ(writer_->stats().expired.load(), 0u);
  clock_.Advance(std::chrono::hours{24 * 30});
  writer_->Expire();
  EXPECT_EQ(writer_->stats().expired.load(), 1u);
  std::string error;
  EXPECT_FALSE(ReadEvidence(*store_, 1, &error).has_value());
  EXPECT_EQ(writer_->stats().bytes.load(), 0u);
}

TEST_F(EvidenceWriterTest, TheThreadAppliesWhatIsSubmitted) {
  Upload("host-a", 0, 200);
  Upload("host-b", 0, 200);
  clock_.Advance(200s);
  writer_->Start();
  ASSERT_TRUE(writer_->Submit(LinkEvent(1, 60, 140)));
  ASSERT_TRUE(writer_->Submit(LinkEvent(2, 60, 140)));
  writer_->Drain();
  EXPECT_EQ(writer_->stats().events.load(), 2u);
  EXPECT_EQ(Read(2).parts.at(0).probes_size(), 160);
}

TEST_F(EvidenceWriterTest, RewrittenHeadersCountOnceTowardsTheCap) {
  Upload("host-a", 0, 200);
  Upload("host-b", 0, 200);
  clock_.Advance(200s);
  const auto stored = [&] {
    std::uint64_t total = 0;
    EXPECT_TRUE(store_
                    ->ScanEvidenceSizes([&](std::uint64_t, std::uint64_t bytes, WallTime) {
                      total += bytes;
                      return true;
                    })
                    .ok());
    return total;
  };
  EvidenceEvent e = LinkEvent(1, 60, 140);
  for (int w = 0; w < 50; ++w) {  // an incident open for 50 windows
    e.verdict->set_start_ns(T(140 + w * 20));
    writer_->Apply(e);
  }
  EXPECT_EQ(writer_->stats().bytes.load(), stored());
  Reopen();  // and a restarted writer rewriting a header it read back
  writer_->Apply(e);
  e.verdict->set_start_ns(T(9000));
  writer_->Apply(e);
  EXPECT_EQ(writer_->stats().bytes.load(), stored());
}

TEST_F(EvidenceWriterTest, VerdictsKeepTheOnsetAndThePresent) {
  EvidenceEvent e = LinkEvent(1, 0, 0);
  for (int w = 0; w < EvidenceWriter::kMaxVerdicts + 10; ++w) {
    e.verdict->set_start_ns(T(w * 20));
    writer_->Apply(e);
  }
  const StoredEvidence s = Read(1);
  ASSERT_EQ(s.header.verdicts_size(), EvidenceWriter::kMaxVerdicts);
  EXPECT_EQ(s.header.verdicts(0).start_ns(), T(0));
  EXPECT_EQ(s.header.verdicts(EvidenceWriter::kMaxVerdicts - 1).start_ns(),
            T((EvidenceWriter::kMaxVerdicts + 9) * 20));
  EXPECT_EQ(s.header.capture().verdicts_dropped(), 10u);
}

}  // namespace
}  // namespace hostmesh::analyzer::evidence
